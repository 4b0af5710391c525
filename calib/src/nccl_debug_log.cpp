// NCCL debug-log reader (see nccl_debug_log.hpp for the line formats and their sources).
#include "autoddl/calib/nccl_debug_log.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>

#include "autoddl/costmodel/text_integer.hpp"

namespace autoddl::calib {

namespace {

// ncclFuncToString (src/collectives.cc) -> measurement row names.
constexpr std::pair<std::string_view, std::string_view> kFuncs[] = {
    {"AllReduce", "all_reduce"},   {"AllGather", "all_gather"}, {"ReduceScatter", "reduce_scatter"},
    {"AlltoAll", "all_to_all"},    {"SendRecv", "send_recv"},   {"Broadcast", "broadcast"},
    {"Reduce", "reduce"}};
// ncclAlgoToString and NCCL_ALGO_* ids (index = id).
constexpr std::pair<std::string_view, std::string_view> kAlgos[] = {
    {"TREE", "tree"}, {"RING", "ring"}, {"COLLNET_DIRECT", "collnet_direct"}, {"COLLNET_CHAIN", "collnet_chain"},
    {"NVLS", "nvls"}, {"NVLS_TREE", "nvls_tree"}, {"PAT", "pat"}};
// ncclProtoToString and NCCL_PROTO_* ids.
constexpr std::pair<std::string_view, std::string_view> kProtos[] = {{"LL", "LL"}, {"LL128", "LL128"}, {"SIMPLE", "Simple"}};

template <size_t N>
std::string lookup(const std::pair<std::string_view, std::string_view> (&table)[N], std::string_view word) {
  for (const auto& [nccl, ours] : table) {
    if (nccl == word) return std::string(ours);
  }
  return "";
}

template <size_t N>
std::string by_id(const std::pair<std::string_view, std::string_view> (&table)[N], int id) {
  return id >= 0 && id < static_cast<int>(N) ? std::string(table[id].second) : "";
}

// A tiny cursor over one message.
struct Cursor {
  std::string_view s;
  bool literal(std::string_view w) {
    if (s.substr(0, w.size()) != w) return false;
    s.remove_prefix(w.size());
    return true;
  }
  std::string_view word() {  // up to the next space or ':'
    size_t n = 0;
    while (n < s.size() && s[n] != ' ' && s[n] != ':') ++n;
    std::string_view w = s.substr(0, n);
    s.remove_prefix(n);
    return w;
  }
  bool number(double& out) {
    std::string buf(s.substr(0, std::min<size_t>(s.size(), 40)));
    char* end = nullptr;
    out = std::strtod(buf.c_str(), &end);
    if (end == buf.c_str()) return false;
    s.remove_prefix(static_cast<size_t>(end - buf.c_str()));
    return true;
  }
  // Decimal digits only ("0..31": not the double "0."), at most kMaxInteger: a rank, a count of
  // ranks or channels, an id; a larger one makes the line unreadable instead of wrapping.
  static constexpr int kMaxInteger = 1 << 24;
  bool integer(int& out) {
    size_t n = 0;
    while (n < s.size() && n < 20 && std::isdigit(static_cast<unsigned char>(s[n]))) ++n;
    const std::optional<int64_t> v = integer_in(s.substr(0, n), 0, kMaxInteger);
    if (!v) return false;
    out = static_cast<int>(*v);
    s.remove_prefix(n);
    return true;
  }
};

// "[<Func>: ]<bytes> Bytes -> Algo <a> proto <p> (channel{Lo..Hi}={lo..hi} | time <t>)"
bool parse_tuning(std::string_view msg, NcclDebugLog& log) {
  Cursor c{msg};
  NcclTuningRecord r;
  if (!msg.empty() && std::isalpha(static_cast<unsigned char>(msg[0]))) {
    std::string_view func = c.word();
    if (!c.literal(": ")) return false;  // "AllReduce [Symmetric]: ..." (symmetric kernels) is not read
    r.collective = lookup(kFuncs, func);
    if (r.collective.empty()) return false;
  }
  if (!c.number(r.bytes) || r.bytes < 0 || !c.literal(" Bytes -> Algo ")) return false;
  std::string_view algo = c.word();
  if (!c.literal(" proto ")) return false;
  std::string_view proto = c.word();
  int id = 0;
  if (Cursor num{algo}; num.integer(id) && num.s.empty()) {
    r.choice.algo = by_id(kAlgos, id);
    Cursor pnum{proto};
    if (!pnum.integer(id) || !pnum.s.empty()) return false;
    r.choice.proto = by_id(kProtos, id);
    if (!c.literal(" time ")) return false;
  } else {
    r.choice.algo = lookup(kAlgos, algo);
    r.choice.proto = lookup(kProtos, proto);
    r.per_rank_bytes = true;
    int lo = 0, hi = 0;
    if (c.literal(" channel{Lo..Hi}={") && c.integer(lo) && c.literal("..") && c.integer(hi) && hi >= lo) {
      r.choice.channels = hi - lo + 1;
    }
  }
  if (r.choice.algo.empty() || r.choice.proto.empty()) return false;
  log.tuning.push_back(std::move(r));
  return true;
}

void parse_comm(std::string_view msg, NcclRunInfo& run) {
  // "comm 0x... rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0"
  size_t at = msg.find(" rank ");
  if (at == std::string_view::npos) return;
  Cursor c{msg.substr(at)};
  int rank = 0, ranks = 0, nodes = 0, local = 0;
  if (!(c.literal(" rank ") && c.integer(rank) && c.literal(" nRanks ") && c.integer(ranks) &&
        c.literal(" nNodes ") && c.integer(nodes) && c.literal(" localRanks ") && c.integer(local))) {
    return;
  }
  if (rank != 0) return;
  NcclCommRecord r{ranks, nodes, local};
  if (std::find(run.comms.begin(), run.comms.end(), r) == run.comms.end()) run.comms.push_back(r);
}

void parse_channels(std::string_view msg, NcclRunInfo& run) {
  // "32 coll channels, 32 collnet channels, 16 nvls channels, 32 p2p channels, 32 p2p channels per peer"
  Cursor c{msg};
  int coll = 0, collnet = 0, nvls = 0;
  if (c.integer(coll) && c.literal(" coll channels, ") && c.integer(collnet) && c.literal(" collnet channels, ") &&
      c.integer(nvls) && c.literal(" nvls channels")) {
    run.coll_channels = std::max(run.coll_channels, coll);
    run.nvls_channels = std::max(run.nvls_channels, nvls);
  }
}

}  // namespace

bool known_nccl_algo(std::string_view algo) {
  for (const auto& a : kAlgos) {
    if (a.second == algo) return true;
  }
  return false;
}

bool known_nccl_proto(std::string_view proto) {
  for (const auto& p : kProtos) {
    if (p.second == proto) return true;
  }
  return false;
}

void parse_nccl_debug_line(std::string_view line, NcclDebugLog& log) {
  constexpr std::string_view kInfo = " NCCL INFO ";
  const size_t at = line.find(kInfo);
  if (at == std::string_view::npos) return;
  std::string_view msg = line.substr(at + kInfo.size());
  while (!msg.empty() && (msg.back() == '\r' || msg.back() == '\n' || msg.back() == ' ')) msg.remove_suffix(1);
  if (msg.find(" Bytes -> Algo ") != std::string_view::npos) {
    parse_tuning(msg, log);
  } else if (msg.substr(0, 13) == "NCCL version ") {
    log.run.version = std::string(msg.substr(13));
  } else if (msg.substr(0, 5) == "NCCL_" && msg.find(" set by environment to ") != std::string_view::npos) {
    const size_t sep = msg.find(" set by environment to ");
    log.run.env[std::string(msg.substr(0, sep))] = std::string(msg.substr(sep + 23));
  } else if (msg.substr(0, 5) == "comm " && msg.find(" nRanks ") != std::string_view::npos) {
    parse_comm(msg, log.run);
  } else if (msg.find(" coll channels, ") != std::string_view::npos) {
    parse_channels(msg, log.run);
  }
}

void parse_nccl_debug_text(std::string_view text, NcclDebugLog& log) {
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    parse_nccl_debug_line(text.substr(0, nl), log);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

std::optional<NcclChoice> nccl_choice_at(const NcclDebugLog& log, std::string_view collective, int ranks,
                                         double size_bytes) {
  const bool shared = collective == "all_gather" || collective == "reduce_scatter";
  std::vector<std::pair<NcclChoice, int>> seen;  // in first-seen order
  for (const NcclTuningRecord& r : log.tuning) {
    if (!r.collective.empty() && r.collective != collective) continue;
    const double nccl_tests_size = r.per_rank_bytes && shared ? r.bytes * ranks : r.bytes;
    if (nccl_tests_size != size_bytes) continue;
    auto it = std::find_if(seen.begin(), seen.end(), [&](const auto& s) { return s.first == r.choice; });
    if (it == seen.end()) {
      seen.push_back({r.choice, 1});
    } else {
      ++it->second;
    }
  }
  if (seen.empty()) return std::nullopt;
  auto best = seen.begin();
  for (auto it = seen.begin(); it != seen.end(); ++it) {
    if (it->second > best->second) best = it;
  }
  return best->first;
}

}  // namespace autoddl::calib
