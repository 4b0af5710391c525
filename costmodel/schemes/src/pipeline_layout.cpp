// Megatron-Core's pipeline layout text (pipeline_layout.hpp): a small recursive-descent parser
// over "E t m L | ( ) *N", the inverse that prints a layout, and the op-to-stage assignment.
#include "autoddl/costmodel/pipeline_layout.hpp"

#include <algorithm>
#include <map>
#include <string_view>

#include "autoddl/costmodel/error.hpp"

namespace autoddl::costmodel {

namespace {

// Layers of the whole model (DeepSeek-V3's 61 times a few) bound what a repetition may expand to.
constexpr size_t kMaxExpanded = 1 << 20;

struct Parser {
  std::string_view text;
  const std::string& field;
  size_t pos = 0;

  [[noreturn]] void fail(const std::string& why) const {
    throw InputError("--scheme", field,
                     why + " at position " + std::to_string(pos + 1) + " of '" + std::string(text) + "'");
  }
  bool done() const { return pos >= text.size(); }
  char peek() const { return text[pos]; }

  // "*N" after an item: N >= 1 (1 when there is no '*').
  size_t repeat() {
    if (done() || peek() != '*') return 1;
    ++pos;
    size_t n = 0, digits = 0;
    while (!done() && peek() >= '0' && peek() <= '9') {
      n = n * 10 + static_cast<size_t>(peek() - '0');
      if (n > kMaxExpanded) fail("repetition too large");
      ++pos;
      ++digits;
    }
    if (digits == 0 || n == 0) fail("'*' takes a count of at least 1");
    return n;
  }

  // A sequence of items up to ')' or the end, expanded: symbols and '|'.
  std::string sequence(int depth) {
    std::string out;
    while (!done() && peek() != ')') {
      std::string item;
      const char c = peek();
      if (c == '(') {
        ++pos;
        item = sequence(depth + 1);
        if (done() || peek() != ')') fail("'(' is not closed");
        ++pos;
      } else if (c == 'E' || c == 't' || c == 'm' || c == 'L' || c == '|') {
        item = std::string(1, c);
        ++pos;
      } else if (c == ' ') {
        ++pos;
        continue;
      } else {
        fail(std::string("unknown symbol '") + c + "' (E embedding, t layer, m MTP layer, L loss, | stage break)");
      }
      const size_t n = repeat();
      if (out.size() + item.size() * n > kMaxExpanded) fail("layout too long");
      for (size_t i = 0; i < n; ++i) out += item;
    }
    if (depth == 0 && !done()) fail("')' without '('");
    return out;
  }
};

// Per op, whether an op of some block comes after it.
std::vector<bool> ops_before_a_block(const Graph& g) {
  std::vector<bool> out(g.ops.size(), false);
  for (size_t i = g.ops.size(); i-- > 1;) out[i - 1] = out[i] || !g.ops[i].block.empty();
  return out;
}

}  // namespace

std::vector<std::string> parse_pipeline_layout(const std::string& text, const std::string& field) {
  Parser p{text, field};
  if (text.empty()) p.fail("empty layout");
  const std::string flat = p.sequence(0);
  std::vector<std::string> stages(1);
  for (char c : flat) {
    if (c == '|') {
      stages.emplace_back();
    } else {
      stages.back() += c;
    }
  }
  return stages;
}

std::string pipeline_layout_text(const std::vector<std::string>& stages) {
  // Each stage as its symbols with runs of t folded ("Et*3"), then runs of equal stages folded
  // into "(stage|)*N".
  const auto stage_text = [](const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size();) {
      size_t j = i;
      while (j < s.size() && s[j] == s[i]) ++j;
      out += s[i];
      if (j - i > 2) {
        out += "*" + std::to_string(j - i);
      } else if (j - i == 2) {
        out += s[i];
      }
      i = j;
    }
    return out;
  };
  std::string out;
  for (size_t i = 0; i < stages.size();) {
    size_t j = i;
    while (j < stages.size() && stages[j] == stages[i]) ++j;
    const bool last = j == stages.size();
    if (j - i > 2 && !last) {
      out += "(" + stage_text(stages[i]) + "|)*" + std::to_string(j - i);
    } else {
      for (size_t k = i; k < j; ++k) out += stage_text(stages[k]) + (k + 1 < stages.size() ? "|" : "");
    }
    i = j;
  }
  return out;
}

std::vector<int> op_chunks_from_layout(const Graph& g, const std::vector<std::string>& stages, const std::string& field) {
  const auto fail = [&](const std::string& why) { throw InputError("--scheme", field, why); };
  std::vector<std::string> layers, mtp;
  for (const Op& op : g.ops) {
    if (op.block.empty()) continue;
    std::vector<std::string>& list = is_mtp_block(op.block) ? mtp : layers;
    if (list.empty() || list.back() != op.block) list.push_back(op.block);
  }
  size_t t = 0, m = 0, e = 0, l = 0;
  std::map<std::string, int> chunk_of;  // block -> stage
  for (size_t s = 0; s < stages.size(); ++s) {
    for (size_t k = 0; k < stages[s].size(); ++k) {
      const char c = stages[s][k];
      if (c == 't') {
        if (t < layers.size()) chunk_of[layers[t]] = static_cast<int>(s);
        ++t;
      } else if (c == 'm') {
        if (m < mtp.size()) chunk_of[mtp[m]] = static_cast<int>(s);
        ++m;
      } else if (c == 'E') {
        if (s != 0 || k != 0) {
          fail("E (the embedding) must open the first stage (it is in stage " + std::to_string(s + 1) + ")");
        }
        ++e;
      } else if (c == 'L') {
        if (s + 1 != stages.size() || k + 1 != stages[s].size()) {
          fail("L (the output layer and loss) must close the last stage (it is in stage " + std::to_string(s + 1) +
               " of " + std::to_string(stages.size()) + ")");
        }
        ++l;
      }
    }
  }
  if (t != layers.size()) {
    fail("the layout places " + std::to_string(t) + " layers (t) but " + g.name + " has " +
         std::to_string(layers.size()));
  }
  if (m != mtp.size()) {
    fail("the layout places " + std::to_string(m) + " multi-token-prediction layers (m) but " + g.name + " has " +
         std::to_string(mtp.size()) +
         (mtp.empty() ? " (set the model's knob mtp=N to add them)" : m == 0 ? " (place them with m, e.g. ...mL)" : ""));
  }
  if (e != 1 || l != 1) fail("the layout needs one E (first stage) and one L (last stage)");
  // Megatron-Core's PipelineParallelLayerLayout.validate_layer_layout: decoder layers before MTP
  // layers, all MTP layers in one virtual stage.
  for (size_t s = 0, seen_m = 0; s < stages.size(); ++s) {
    for (char c : stages[s]) {
      if (c == 'm') ++seen_m;
      if (c == 't' && seen_m > 0) {
        fail("a decoder layer (t) follows a multi-token-prediction layer (m) in stage " + std::to_string(s + 1) +
             ": Megatron-Core places the m's after every t");
      }
    }
    const size_t here = static_cast<size_t>(std::count(stages[s].begin(), stages[s].end(), 'm'));
    if (here > 0 && here != m) {
      fail("stage " + std::to_string(s + 1) + " holds " + std::to_string(here) + " of the " + std::to_string(m) +
           " multi-token-prediction layers (m): Megatron-Core needs them all in one stage");
    }
  }
  // Ops outside blocks: before the first block they go with E; between blocks with the block
  // before them (the final norm between the decoder layers and the MTP layers stays with the
  // last decoder layer, as Megatron-Core builds it); after the last block with L.
  const std::vector<bool> before_block = ops_before_a_block(g);
  std::vector<int> out(g.ops.size(), 0);
  int cur = 0;
  bool seen_block = false;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    if (!op.block.empty()) {
      cur = chunk_of.at(op.block);
      seen_block = true;
    } else if (seen_block && !before_block[i]) {
      cur = static_cast<int>(stages.size()) - 1;
    }
    out[i] = cur;
  }
  return out;
}

namespace {

struct BalancedLayout {
  std::vector<std::string> stages;
  double max_load = 0;  // in mean decoder layers
};

BalancedLayout balance_layout(const Graph& g, int64_t chunks) {
  BalancedLayout out;
  if (chunks < 1) return out;
  // Work (forward + backward FLOPs) before the first layer (E), of the layers, of the MTP layers
  // and after the last layer (L).
  double head = 0, layer_work = 0, mtp_work = 0, tail = 0;
  size_t layers = 0, mtp = 0;
  const std::string* last = nullptr;
  for (const Op& op : g.ops) {
    const double w = op.work.fwd_flops + op.work.bwd_flops;
    if (op.block.empty()) {
      (last ? tail : head) += w;
      continue;
    }
    const bool m = is_mtp_block(op.block);
    if (!last || *last != op.block) ++(m ? mtp : layers);
    last = &op.block;
    (m ? mtp_work : layer_work) += w;
  }
  if (layers == 0) return out;
  const double unit = layer_work > 0 ? layer_work / static_cast<double>(layers) : 1.0;
  const double e = layer_work > 0 ? head / unit : 0, l = layer_work > 0 ? (mtp_work + tail) / unit : 0;
  const size_t n = static_cast<size_t>(chunks);
  std::vector<double> load(n, 0.0);
  std::vector<size_t> count(n, 0);
  load.front() += e;
  load.back() += l;
  for (size_t k = 0; k < layers; ++k) {
    size_t at = n - 1;
    for (size_t s = n - 1; s-- > 0;) {
      if (load[s] < load[at]) at = s;
    }
    load[at] += 1.0;
    ++count[at];
  }
  out.stages.resize(n);
  for (size_t s = 0; s < n; ++s) {
    if (s == 0) out.stages[s] += 'E';
    out.stages[s].append(count[s], 't');
    if (s + 1 == n) {
      out.stages[s].append(mtp, 'm');
      out.stages[s] += 'L';
    }
    if (out.stages[s].empty()) return BalancedLayout{};
    out.max_load = std::max(out.max_load, load[s]);
  }
  return out;
}

}  // namespace

std::vector<std::string> balanced_pipeline_layout(const Graph& g, int64_t chunks) {
  return balance_layout(g, chunks).stages;
}

double balanced_pipeline_load(const Graph& g, int64_t chunks) { return balance_layout(g, chunks).max_load; }

std::string layout_of_op_chunks(const Graph& g, const std::vector<int>& op_chunk, int chunks) {
  if (chunks < 1 || op_chunk.size() != g.ops.size()) return "";
  std::vector<std::string> stages(static_cast<size_t>(chunks));
  const std::vector<bool> block_after = ops_before_a_block(g);
  std::string current_block;
  int current_chunk = 0;
  bool seen_block = false;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    const int c = op_chunk[i];
    if (c < current_chunk || c >= chunks) return "";  // chunks out of order
    if (op.block.empty()) {
      if (!seen_block && c != 0) return "";
      if (seen_block && c != (block_after[i] ? current_chunk : chunks - 1)) return "";
      current_chunk = c;
      continue;
    }
    if (op.block != current_block) {
      current_block = op.block;
      stages[static_cast<size_t>(c)] += is_mtp_block(op.block) ? 'm' : 't';
      seen_block = true;
    } else if (c != current_chunk) {
      return "";  // one block over two chunks
    }
    current_chunk = c;
  }
  stages.front().insert(0, "E");
  stages.back() += "L";
  return pipeline_layout_text(stages);
}

}  // namespace autoddl::costmodel
