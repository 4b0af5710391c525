// The Megatron-LM grid walk (see megatron_grid.hpp); on a Mixture-of-Experts model each point
// also tries the expert-parallel cuts (ep, etp) Megatron-Core accepts.
#include "megatron_grid.hpp"

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/pipeline_layout.hpp"

namespace autoddl::search {

using namespace costmodel;

bool grid_better(const CostReport& a, const CostReport& b) {
  if (a.feasible != b.feasible) return a.feasible;
  return a.feasible ? a.iteration_s < b.iteration_s : a.peak_memory_bytes < b.peak_memory_bytes;
}

namespace {

// Consecutive repeated blocks (transformer layers) of the graph: what pp × interleave divides for
// Megatron's even split. Multi-token-prediction blocks are not counted: Megatron places them on
// the last stage.
int count_blocks(const Graph& g) {
  int n = 0;
  const std::string* last = nullptr;
  for (const Op& op : g.ops) {
    if (op.block.empty() || is_mtp_block(op.block) || (last && *last == op.block)) continue;
    last = &op.block;
    ++n;
  }
  return n;
}

// The pipeline split of one pp: how the layers go to its stages. When pp divides the layers,
// Megatron's even split (no layout=) and, with the interleaved schedule, one layer per chunk. When
// it does not, Megatron-Core's --pipeline-model-parallel-layout: the work-balanced layout
// (balanced_pipeline_layout: the embedding with the first stage, the loss with the last) over pp
// stages and, interleaved, over pp·v chunks with v the fewest chunks per rank that reach the
// smallest largest-chunk work (DeepSeek-V3's 61 layers at pp=8: v=4, NVIDIA's "Et|(tt|)*30L").
// `plain` is empty when no split exists (more stages than layers); `interleaved` when there is
// no interleaved one.
struct PipelineSplit {
  bool exists = true;
  std::string plain;        // ",layout=..." or ""
  std::string interleaved;  // ",interleave=V" or ",interleave=V,layout=..." or "" (none)
};

PipelineSplit pipeline_split(const Graph& g, int blocks, int pp) {
  PipelineSplit out;
  if (pp < 2) return out;
  if (blocks > 0 && blocks % pp == 0) {
    if (blocks / pp > 1) out.interleaved = ",interleave=" + std::to_string(blocks / pp);
    return out;
  }
  const std::vector<std::string> stages = balanced_pipeline_layout(g, pp);
  if (stages.empty()) {
    out.exists = false;
    return out;
  }
  out.plain = ",layout=" + pipeline_layout_text(stages);
  int best_v = 0;
  double best_load = 0;
  for (int v = 2; int64_t{pp} * v <= blocks; ++v) {
    const double load = balanced_pipeline_load(g, int64_t{pp} * v);
    if (load > 0 && (best_v == 0 || load < best_load - 1e-9)) {
      best_v = v;
      best_load = load;
    }
  }
  if (best_v > 0) {
    out.interleaved = ",interleave=" + std::to_string(best_v) +
                      ",layout=" + pipeline_layout_text(balanced_pipeline_layout(g, int64_t{pp} * best_v));
  }
  return out;
}

// The option suffixes tried at one (tp, pp, dp, mb, sp) point, each with its own recompute walk:
// the plain SC'21 layout, then today's Megatron-LM/NeMo options together (the distributed
// optimizer when dp > 1, userbuffers tp overlap with sp), and those with the interleaved schedule
// and overlapped p2p (pipeline_split: one layer per chunk when pp divides the layers, the
// smallest bubble and in-flight activations; pp_overlap hides the extra sends). An uneven split
// carries its layout= in every suffix.
std::vector<std::string> option_variants(const PipelineSplit& split, int dp, int sp) {
  std::vector<std::string> out = {split.plain};
  std::string modern = dp > 1 ? ",dist_opt=1" : "";
  if (sp) modern += ",tp_overlap=1";
  if (!modern.empty()) out.push_back(modern + split.plain);
  if (!split.interleaved.empty()) out.push_back(modern + split.interleaved + ",pp_overlap=1");
  return out;
}

// The expert-parallel suffixes tried at one (tp, dp) point of a Mixture-of-Experts model: none
// (experts replicated), then every ep dividing the experts with etp = tp (ep | dp), then, with
// tp > 1, every ep spanning the tensor-parallel ranks with etp = 1 (ep = tp·k, k | dp).
std::vector<std::string> expert_variants(int64_t experts, int tp, int dp) {
  std::vector<std::string> out = {""};
  if (experts < 2) return out;
  for (int ep = 2; ep <= dp && ep <= experts; ++ep) {
    if (dp % ep == 0 && experts % ep == 0) out.push_back(",ep=" + std::to_string(ep));
  }
  for (int k = 1; tp > 1 && k <= dp && int64_t{k} * tp <= experts; ++k) {
    if (dp % k == 0 && experts % (int64_t{k} * tp) == 0) out.push_back(",ep=" + std::to_string(k * tp) + ",etp=1");
  }
  return out;
}

// The context-parallel sizes tried at one (tp, pp) point with `ranks` = devices / (tp·pp): 1,
// then, on a dense model with fused attention (where Megatron-Core runs it), every power of two
// dividing `ranks` that leaves each rank's two causal chunks at least 1,024 tokens: below that
// attention is too short to hide the KV exchange and NVIDIA's recipes do not use it (CP2 from
// sequence 8,192: the NeMo Llama 3 70B/405B recipes).
std::vector<int> context_parallel_sizes(const Graph& g, int64_t experts, int ranks) {
  std::vector<int> out = {1};
  if (experts > 0) return out;
  const Op* attention = fused_attention(g);
  const int64_t seq = attention ? g.tensors[attention->inputs[0]].shape[2] : 0;
  for (int cp = 2; cp <= ranks && seq / (2 * cp) >= 1024; cp *= 2) {
    if (ranks % cp == 0) out.push_back(cp);
  }
  return out;
}

// `list` (best first, at most `keep`) with (s, r) in its place when it ranks among them.
void keep_best(std::vector<GridPoint>& list, const Scheme& s, const CostReport& r, int keep) {
  auto at = std::find_if(list.begin(), list.end(), [&](const GridPoint& p) { return grid_better(r, p.report); });
  if (at == list.end() && static_cast<int>(list.size()) >= keep) return;
  list.insert(at, GridPoint{s, r});
  if (static_cast<int>(list.size()) > keep) list.pop_back();
}

}  // namespace

MegatronGrid megatron_grid(const Graph& g, const ClusterSpec& c, double time_limit_s, int keep) {
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  const int devices = c.total_gpus();
  const int blocks = count_blocks(g);
  const int64_t experts = routed_experts(g);
  MegatronGrid grid;
  std::vector<GridPoint> plain_best, cp_best;
  auto offer = [&](Scheme&& s, const CostReport& r, const std::string& ep, bool context_parallel) {
    keep_best(context_parallel ? cp_best : plain_best, s, r, context_parallel ? 1 : keep);
    if (experts > 0) {
      const std::string key = ep.empty() ? ep : ep.substr(1);  // without the leading ','
      auto it = grid.best_by_experts.find(key);
      if (it == grid.best_by_experts.end()) grid.best_by_experts.emplace(key, GridPoint{s, r});
      else if (grid_better(r, it->second.report)) it->second = GridPoint{s, r};
    }
    const auto key = std::make_pair(s.mesh_shape, s.pipeline_dim);
    auto mine = grid.best_by_mesh.find(key);
    if (mine == grid.best_by_mesh.end()) grid.best_by_mesh.emplace(key, GridPoint{s, r});
    else if (grid_better(r, mine->second.report)) mine->second = GridPoint{s, r};
    keep_best(grid.best, s, r, keep);
  };
  for (int tp = 1; tp <= devices && !grid.truncated; ++tp) {
    if (devices % tp) continue;
    for (int pp = 1; pp <= devices / tp && !grid.truncated; ++pp) {
      if ((devices / tp) % pp) continue;
      const PipelineSplit split = pipeline_split(g, blocks, pp);
      if (!split.exists) continue;
      for (int cp : context_parallel_sizes(g, experts, devices / tp / pp)) {
        const int dp = devices / tp / pp / cp;
        if (g.batch % dp) continue;
        const int64_t per_replica = g.batch / dp;
        const std::string cp_opt = cp > 1 ? ",cp=" + std::to_string(cp) : "";
        for (int64_t mb = 1; mb <= per_replica && !grid.truncated; mb *= 2) {
          if (per_replica % mb) continue;
          for (const std::string& ep : expert_variants(experts, tp, dp)) {
            for (int sp = 0; sp <= (tp > 1 ? 1 : 0); ++sp) {
              bool exists = true;  // the plain layout exists: (tp, pp, dp, mb, ep) fits the model
              for (const std::string& options : option_variants(split, dp, sp)) {
                if (!exists || grid.truncated) break;
                for (const char* rc : {"none", "selective", "full"}) {
                  if (elapsed() > time_limit_s) {
                    grid.truncated = true;
                    break;
                  }
                  const std::string spec = "megatron:tp=" + std::to_string(tp) + ",pp=" + std::to_string(pp) +
                                           ",dp=" + std::to_string(dp) + cp_opt + ",mb=" + std::to_string(mb) + ep +
                                           ",sp=" + std::to_string(sp) + ",recompute=" + rc + options;
                  Scheme s;
                  try {
                    s = make_scheme(spec, g, c, {});
                  } catch (const InputError&) {
                    exists = !options.empty();  // the plain layout failing rules out its variants too
                    break;
                  }
                  ++grid.points;
                  const CostReport r = evaluate(g, c, s);
                  grid.feasible += r.feasible;
                  offer(std::move(s), r, ep, cp > 1);
                  if (r.feasible) break;  // fits: more recompute only costs time
                }
              }
            }
          }
        }
      }
    }
  }
  grid.starts = std::move(plain_best);
  grid.starts.insert(grid.starts.end(), cp_best.begin(), cp_best.end());
  return grid;
}

}  // namespace autoddl::search
