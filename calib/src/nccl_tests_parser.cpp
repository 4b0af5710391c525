// nccl-tests stdout reader (see nccl_tests_parser.hpp). The column layout is read from the run's
// "# size count type redop root ..." header: 4 columns per body (time algbw busbw #wrong), 8
// with per-iteration timing (-I: + i_min i_max i_p99 i_cv%), and a trailing date and time when
// timestamps are on.
#include "autoddl/calib/nccl_tests_parser.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <optional>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/costmodel/text_integer.hpp"

namespace autoddl::calib {

using costmodel::CollectiveKind;

namespace {

std::vector<std::string_view> split_ws(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool parse_double(std::string_view tok, double& out) {
  std::string t(tok);
  char* end = nullptr;
  out = std::strtod(t.c_str(), &end);
  return !t.empty() && end == t.c_str() + t.size() && std::isfinite(out);
}

// A whole decimal token in [lo, hi]; ranks, groups and thread counts are stored as int, so their
// callers pass a range that fits rather than let a cast cut 4294967297 to 1.
bool parse_int(std::string_view tok, int64_t& out, int64_t lo = INT64_MIN, int64_t hi = INT64_MAX) {
  const std::optional<int64_t> v = integer_in(tok, lo, hi);
  if (v) out = *v;
  return v.has_value();
}

// Largest rank, group, thread or GPU count a log may name (the calibration file's bound).
constexpr int64_t kMaxRankLike = 1 << 24;

struct RankLine {
  int rank = 0;
  int group = 0;
  std::string host;
  std::string device_name;
};

class Parser {
 public:
  Parser(const std::string& file, std::optional<CollectiveKind> forced, std::optional<costmodel::CommGroup> group)
      : file_(file), forced_(forced), given_group_(group) {}

  void line(std::string_view raw, int n) {
    line_no_ = n;
    std::string_view s = trim(raw);
    if (s.empty()) return;
    if (s.find("] NCCL ") != std::string_view::npos) return;  // NCCL_DEBUG output
    if (s.front() == '#') return comment(trim(s.substr(1)));
    data_row(s);
  }

  std::vector<NcclTestsRun> finish() {
    finish_run();
    if (runs_.empty()) fail(0, "no nccl-tests results found");
    return std::move(runs_);
  }

 private:
  [[noreturn]] void fail(int line, const std::string& reason) const {
    throw InputError(file_, line > 0 ? "line " + std::to_string(line) : "", reason);
  }
  [[noreturn]] void fail(const std::string& reason) const { fail(line_no_, reason); }

  void start_run() {
    finish_run();
    run_ = NcclTestsRun{};
    run_->file = file_;
    run_->first_line = line_no_;
    run_->program = pending_program_;
    pending_program_.clear();
    ranks_.clear();
    body_width_ = 0;
  }

  void comment(std::string_view s) {
    auto tok = split_ws(s);
    if (tok.empty()) return;
    if (starts_with(s, "Collective test starting:")) {
      pending_program_ = std::string(trim(s.substr(std::string_view("Collective test starting:").size())));
    } else if (tok[0] == "nThread") {
      start_run();
      int64_t threads = 0, gpus = 0;
      if (tok.size() < 4 || tok[2] != "nGpus" || !parse_int(tok[1], threads, 1, kMaxRankLike) ||
          !parse_int(tok[3], gpus, 1, kMaxRankLike)) {
        fail("malformed '# nThread <n> nGpus <n> ...' line (each n an integer in [1, " + std::to_string(kMaxRankLike) + "])");
      }
      run_->threads = static_cast<int>(threads);
      run_->gpus_per_thread = static_cast<int>(gpus);
    } else if (tok[0] == "Rank") {
      rank_line(tok);
    } else if (tok[0] == "size") {
      column_header(tok);
    } else if (starts_with(s, "Out of bounds values")) {
      int64_t v = 0;
      auto colon = split_ws(s.substr(s.find(':') + 1));
      if (!run_ || colon.empty() || !parse_int(colon[0], v)) fail("malformed 'Out of bounds values' line");
      run_->out_of_bounds = v;
    } else if (starts_with(s, "Avg bus bandwidth")) {
      double v = 0;
      auto colon = split_ws(s.substr(s.find(':') + 1));
      if (!run_ || colon.empty() || !parse_double(colon[0], v)) fail("malformed 'Avg bus bandwidth' line");
      run_->avg_busbw_GBps = v;
    }
    // Every other '#' line (units row, "Using devices", version, memory use, ...) is commentary.
  }

  // "#  Rank  0 Group  0 Pid 1234 on host device  0 [0000:07:00] NVIDIA H100 80GB HBM3"
  // (older nccl-tests print "[0x07]" as the bus id).
  void rank_line(const std::vector<std::string_view>& tok) {
    int64_t rank = 0, group = 0;
    if (tok.size() < 10 || tok[2] != "Group" || tok[4] != "Pid" || tok[6] != "on" ||
        tok[8] != "device" || !parse_int(tok[1], rank, 0, kMaxRankLike) ||
        !parse_int(tok[3], group, 0, kMaxRankLike)) {
      fail("malformed '#  Rank <r> Group <g> Pid <p> on <host> device <d> ...' line (r and g integers in [0, " +
           std::to_string(kMaxRankLike) + "])");
    }
    if (!run_) start_run();
    RankLine r{static_cast<int>(rank), static_cast<int>(group), std::string(tok[7]), ""};
    size_t name_from = 10;
    if (tok.size() > 10 && tok[10].front() == '[') name_from = 11;
    for (size_t i = name_from; i < tok.size(); ++i) {
      if (!r.device_name.empty()) r.device_name += ' ';
      r.device_name += tok[i];
    }
    ranks_.push_back(r);
  }

  void column_header(const std::vector<std::string_view>& tok) {
    static constexpr std::string_view lead[] = {"size", "count", "type", "redop", "root"};
    if (tok.size() < 9) fail("malformed column header");
    for (size_t i = 0; i < 5; ++i) {
      if (tok[i] != lead[i]) fail("unexpected column '" + std::string(tok[i]) + "' in the header");
    }
    if (!run_) start_run();
    bool per_iter = std::find(tok.begin(), tok.end(), "i_min") != tok.end();
    body_width_ = per_iter ? 8 : 4;
    timestamps_ = tok.back() == "timestamp";
    run_->cpu_time = tok[5] == "cputime";
    size_t expect = 5 + 2 * body_width_ + (timestamps_ ? 1 : 0);
    if (tok.size() != expect || (tok[5] != "time" && tok[5] != "cputime") || tok[6] != "algbw" ||
        tok[7] != "busbw" || tok[8] != "#wrong") {
      fail("unrecognized column header (expected size count type redop root time algbw busbw "
           "#wrong, for out-of-place and in-place)");
    }
  }

  NcclTestsTiming body(const std::vector<std::string_view>& tok, size_t at) const {
    NcclTestsTiming t;
    if (!parse_double(tok[at], t.time_us) || t.time_us < 0) fail("bad time '" + std::string(tok[at]) + "'");
    if (!parse_double(tok[at + 1], t.algbw_GBps) || t.algbw_GBps < 0) fail("bad algbw '" + std::string(tok[at + 1]) + "'");
    if (!parse_double(tok[at + 2], t.busbw_GBps) || t.busbw_GBps < 0) fail("bad busbw '" + std::string(tok[at + 2]) + "'");
    if (tok[at + 3] != "N/A") {
      double w = 0;
      if (!parse_double(tok[at + 3], w) || w < 0) fail("bad #wrong '" + std::string(tok[at + 3]) + "'");
      t.wrong = w;
    }
    for (size_t i = at + 4; i < at + body_width_; ++i) {  // per-iteration statistics
      double v = 0;
      if (!parse_double(tok[i], v)) fail("bad per-iteration value '" + std::string(tok[i]) + "'");
    }
    return t;
  }

  void data_row(std::string_view s) {
    auto tok = split_ws(s);
    int64_t size = 0;
    if (tok.empty() || !parse_int(tok[0], size)) {
      fail("not an nccl-tests line: '" + std::string(s.substr(0, 60)) + "'");
    }
    if (!run_ || body_width_ == 0) fail("result row before the column header ('# size count ...')");
    size_t expect = 5 + 2 * body_width_ + (timestamps_ ? 2 : 0);
    if (tok.size() != expect) {
      fail("expected " + std::to_string(expect) + " columns, found " + std::to_string(tok.size()));
    }
    NcclTestsRow r;
    r.line = line_no_;
    int64_t count = 0, root = 0;
    if (size < 0) fail("negative size");
    if (!parse_int(tok[1], count) || count < 0) fail("bad count '" + std::string(tok[1]) + "'");
    if (!parse_int(tok[4], root, -1, kMaxRankLike)) fail("bad root '" + std::string(tok[4]) + "' (an integer in [-1, " + std::to_string(kMaxRankLike) + "])");
    r.size_bytes = static_cast<double>(size);
    r.count = count;
    r.type = std::string(tok[2]);
    r.redop = std::string(tok[3]);
    r.root = static_cast<int>(root);
    r.out_of_place = body(tok, 5);
    r.in_place = body(tok, 5 + body_width_);
    run_->rows.push_back(std::move(r));
  }

  const costmodel::CollectiveInfo* kind_from_file_name() const {
    std::string base = file_.substr(file_.find_last_of('/') + 1);
    const costmodel::CollectiveInfo* best = nullptr;
    size_t best_len = 0;
    for (const costmodel::CollectiveInfo& c : costmodel::collective_kinds()) {
      std::string_view short_name = c.nccl_tests_name.substr(0, c.nccl_tests_name.rfind("_perf"));
      for (std::string_view n : {c.name, short_name}) {
        if (base.find(n) != std::string::npos && n.size() > best_len) {
          best = &c;
          best_len = n.size();
        }
      }
    }
    return best;
  }

  void finish_run() {
    if (!run_) return;
    NcclTestsRun& run = *run_;
    int at = run.first_line;
    if (run.rows.empty()) fail(at, "run has no result rows");

    const costmodel::CollectiveInfo* info = nullptr;
    if (!run.program.empty()) {
      info = collective_of_nccl_tests_program(run.program);
      if (!info) fail(at, "'" + run.program + "' is not a collective autoddl models");
      if (forced_ && info->kind != *forced_) {
        fail(at, "the log is from " + run.program + " but the collective was given as " +
                     std::string(costmodel::collective_info(*forced_).name));
      }
    } else if (forced_) {
      info = &costmodel::collective_info(*forced_);
    } else {
      info = kind_from_file_name();
      if (!info) {
        fail(at, "cannot tell which collective this is (no '# Collective test starting:' line and "
                 "no collective in the file name); name it explicitly");
      }
    }
    run.kind = info->kind;

    if (!ranks_.empty()) {
      // With NCCL_TESTS_SPLIT the ranks form several groups; one collective spans one group.
      std::map<std::string, int> per_host;
      int group = ranks_.front().group, ranks = 0, per_node = 0;
      for (const RankLine& r : ranks_) {
        if (r.group != group) continue;
        ++ranks;
        per_node = std::max(per_node, ++per_host[r.host]);
        run.device_names.push_back(r.device_name);
      }
      run.group = {ranks, per_node};
      // Groups with a member on the first group's first host run at once through its NICs
      // (what a mesh dim's groups_per_node is); across nodes that sets the bandwidth each sees.
      if (ranks > per_node) {
        const std::string& host = ranks_.front().host;
        std::set<int> groups;
        for (const RankLine& r : ranks_)
          if (r.host == host) groups.insert(r.group);
        run.groups_per_node = static_cast<int>(groups.size());
      }
      if (given_group_ && (given_group_->ranks != ranks || given_group_->ranks_per_node != per_node)) {
        fail(at, "the log's '#  Rank' lines show " + std::to_string(ranks) + " ranks, " + std::to_string(per_node) +
                     " per node, but " + std::to_string(given_group_->ranks) + " ranks, " +
                     std::to_string(given_group_->ranks_per_node) + " per node were given");
      }
    } else if (given_group_) {
      run.group = *given_group_;
    } else if (run.threads > 0) {  // no rank lines: assume one process on one node
      run.group.ranks = run.threads * run.gpus_per_thread;
      run.group.ranks_per_node = run.group.ranks;
    } else {
      fail(at, "cannot tell the number of ranks (no '#  Rank' or '# nThread' lines); give the ranks and ranks "
               "per node of the run (autoddl fit --ranks N --ranks-per-node M)");
    }

    // busbw = algbw × factor: a mismatch means the collective or the rank count is wrong.
    double factor = info->bw_factor(run.group.ranks);
    for (const NcclTestsRow& r : run.rows) {
      for (const NcclTestsTiming* t : {&r.out_of_place, &r.in_place}) {
        if (t->algbw_GBps < 1) continue;  // 2 decimals: too coarse to compare below 1 GB/s
        double expect = t->algbw_GBps * factor;
        if (std::abs(t->busbw_GBps - expect) > 0.02 * std::max(expect, 0.5)) {
          char buf[256];
          std::snprintf(buf, sizeof buf,
                        "busbw %.2f is not algbw %.2f x %.4g, the busbw factor of %s over %d "
                        "ranks: wrong collective or rank count?",
                        t->busbw_GBps, t->algbw_GBps, factor, std::string(info->name).c_str(),
                        run.group.ranks);
          fail(r.line, buf);
        }
      }
    }
    runs_.push_back(std::move(run));
    run_.reset();
  }

  std::string file_;
  std::optional<CollectiveKind> forced_;
  std::optional<costmodel::CommGroup> given_group_;
  int line_no_ = 0;
  std::string pending_program_;
  std::optional<NcclTestsRun> run_;
  std::vector<RankLine> ranks_;
  size_t body_width_ = 0;
  bool timestamps_ = false;
  std::vector<NcclTestsRun> runs_;
};

}  // namespace

const costmodel::CollectiveInfo* collective_of_nccl_tests_program(std::string_view program) {
  std::string_view base = program.substr(program.find_last_of('/') + 1);
  if (base.size() > 4 && base.substr(base.size() - 4) == "_mpi") base.remove_suffix(4);
  for (const costmodel::CollectiveInfo& c : costmodel::collective_kinds()) {
    if (c.nccl_tests_name == base) return &c;
  }
  return nullptr;
}

std::vector<NcclTestsRun> parse_nccl_tests(std::string_view text, const std::string& file,
                                           std::optional<CollectiveKind> collective,
                                           std::optional<costmodel::CommGroup> group) {
  if (group && (group->ranks < 1 || group->ranks_per_node < 1 || group->ranks_per_node > group->ranks ||
                group->ranks % group->ranks_per_node != 0)) {
    throw InputError(file, "", "the ranks given (" + std::to_string(group->ranks) + ", " +
                                   std::to_string(group->ranks_per_node) +
                                   " per node) must be >= 1 and a multiple of the ranks per node");
  }
  Parser p(file, collective, group);
  int n = 0;
  size_t i = 0;
  while (i <= text.size()) {
    size_t j = text.find('\n', i);
    if (j == std::string_view::npos) j = text.size();
    p.line(text.substr(i, j - i), ++n);
    i = j + 1;
  }
  return p.finish();
}

std::vector<NcclTestsRun> load_nccl_tests_file(const std::string& path, std::optional<CollectiveKind> collective,
                                               std::optional<costmodel::CommGroup> group) {
  return parse_nccl_tests(read_text_file(path), path, collective, group);
}

}  // namespace autoddl::calib
