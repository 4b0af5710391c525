// The Megatron-LM grid walk (see megatron_grid.hpp); on a Mixture-of-Experts model each point
// also tries the expert-parallel cuts (ep, etp) Megatron-Core accepts.
#include "megatron_grid.hpp"
#include "parallel.hpp"

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
// carries its layout= in every suffix. Without a pipeline, on a dense model with data- or
// context-parallel ranks, Megatron-FSDP too (fsdp=1, as Megatron-Bridge's Llama 3 70B recipes for
// Blackwell run it), with tp overlap under sp; and when the data-parallel ranks span nodes, its
// hybrid sharding with one shard group per node (hsdp=R: the gathers stay on NVLink).
constexpr int kMaxOptionVariants = 4;
std::vector<std::string> option_variants(const PipelineSplit& split, int pp, int tp, int dp, int cp, int sp, bool moe,
                                         int gpus_per_node) {
  std::vector<std::string> out = {split.plain};
  std::string modern = dp > 1 ? ",dist_opt=1" : "";
  if (sp) modern += ",tp_overlap=1";
  if (!modern.empty()) out.push_back(modern + split.plain);
  if (!split.interleaved.empty()) out.push_back(modern + split.interleaved + ",pp_overlap=1");
  if (pp == 1 && !moe && dp * cp > 1) {
    const std::string overlap = sp ? ",tp_overlap=1" : "";
    out.push_back(",fsdp=1" + overlap);
    const int64_t ranks = int64_t{tp} * cp * dp;
    const int64_t replicas = ranks / gpus_per_node;
    if (ranks % gpus_per_node == 0 && replicas >= 2 && dp % replicas == 0 && dp / replicas >= 2 && !(cp > 1 && tp > 1)) {
      out.push_back(",fsdp=1,hsdp=" + std::to_string(replicas) + overlap);
    }
  }
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

}  // namespace

MegatronGrid megatron_grid(const Graph& g, const ClusterSpec& c, double time_limit_s, int keep, int jobs) {
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  const int devices = c.total_gpus();
  const int blocks = count_blocks(g);
  const int64_t experts = routed_experts(g);
  MegatronGrid grid;
  // One task per (tp, pp, cp): its points are priced on --jobs threads (evaluate() of every point
  // is most of a search's first seconds), kept per task and offered in the walk's order, so the
  // grid does not depend on the number of threads (only the time limit can cut it short).
  struct Task {
    int tp, pp, cp;
    PipelineSplit split;
  };
  struct Priced {
    std::string spec;
    // Without per_op; out of memory: peak_memory_bytes and feasible (false) alone.
    CostReport report;
    std::string ep;
    std::pair<std::vector<int>, int> mesh;  // the scheme's mesh and pipeline dim
  };
  std::vector<Task> tasks;
  for (int tp = 1; tp <= devices; ++tp) {
    if (devices % tp) continue;
    for (int pp = 1; pp <= devices / tp; ++pp) {
      if ((devices / tp) % pp) continue;
      const PipelineSplit split = pipeline_split(g, blocks, pp);
      if (!split.exists) continue;
      for (int cp : context_parallel_sizes(g, experts, devices / tp / pp)) tasks.push_back({tp, pp, cp, split});
    }
  }
  std::vector<std::vector<Priced>> priced(tasks.size());
  std::vector<char> cut(tasks.size(), 0);
  parallel_for(static_cast<int>(tasks.size()), jobs, [&](int k) {
    const auto& [tp, pp, cp, split] = tasks[k];
    const int dp = devices / tp / pp / cp;
    if (g.batch % dp) return;
    const int64_t per_replica = g.batch / dp;
    const std::string cp_opt = cp > 1 ? ",cp=" + std::to_string(cp) : "";
    const std::vector<std::string> eps = expert_variants(experts, tp, dp);
    // Per (ep, sp, options): out of memory under every recompute mode at a smaller micro-batch.
    // At a fixed layout a larger micro-batch only holds more activations (peak memory grows with
    // mb: tests/search/grid_layout_test.cpp), so such a point is not priced again.
    std::vector<char> out_of_memory(eps.size() * 2 * kMaxOptionVariants, 0);
    EvalCache cache;  // the task's meshes' boxing tables, built once for all its points
    for (int64_t mb = 1; mb <= per_replica; mb *= 2) {
      if (per_replica % mb) continue;
      for (size_t e = 0; e < eps.size(); ++e) {
        const std::string& ep = eps[e];
        for (int sp = 0; sp <= (tp > 1 ? 1 : 0); ++sp) {
          bool exists = true;  // the plain layout exists: (tp, pp, dp, mb, ep) fits the model
          const std::vector<std::string> variants = option_variants(split, pp, tp, dp, cp, sp, experts > 0, c.gpus_per_node);
          AUTODDL_CHECK(variants.size() <= static_cast<size_t>(kMaxOptionVariants)) << "option variants";
          for (size_t v = 0; v < variants.size() && exists; ++v) {
            const std::string& options = variants[v];
            char& oom = out_of_memory[(e * 2 + sp) * kMaxOptionVariants + v];
            if (oom) continue;
            bool fits = false, priced_every_mode = true;
            // Made once with recompute=none: the recompute modes differ in Scheme::recompute alone.
            Scheme s;
            for (Recompute rc : {Recompute::none, Recompute::selective, Recompute::full}) {
              if (elapsed() > time_limit_s) {
                cut[k] = 1;
                return;
              }
              const std::string spec = "megatron:tp=" + std::to_string(tp) + ",pp=" + std::to_string(pp) +
                                       ",dp=" + std::to_string(dp) + cp_opt + ",mb=" + std::to_string(mb) + ep +
                                       ",sp=" + std::to_string(sp) + ",recompute=" +
                                       std::string(recompute_name(rc)) + options;
              if (rc == Recompute::none) {
                try {
                  s = make_scheme(spec, g, c, {});
                } catch (const InputError&) {
                  exists = !options.empty();  // the plain layout failing rules out its variants too
                  priced_every_mode = false;
                  break;
                }
              }
              s.recompute = rc;
              s.name = spec;
              // Most points run out of memory: those are priced for memory alone (memory_fit).
              const MemoryFit fit = memory_fit(g, c, s);
              Priced p{spec, {}, ep, {s.mesh_shape, s.pipeline_dim}};
              if (fit.fits) {
                p.report = evaluate(g, c, s, cache);
                p.report.per_op = {};  // thousands of points x ops: only kept points need it (below)
              } else {
                p.report.feasible = false;
                p.report.peak_memory_bytes = fit.peak_bytes;
              }
              priced[k].push_back(std::move(p));
              if (fit.fits) {  // fits: more recompute only costs time
                fits = true;
                break;
              }
            }
            oom = !fits && priced_every_mode;
          }
        }
      }
    }
  });
  // The lists by report alone, in the walk's order; then a scheme is made again only for the
  // points they keep (a scheme per op of every one of thousands of points would not fit in
  // memory, and making one costs as much as pricing it); every kept point is priced again in
  // full, with its per-op rows (the walk drops them; an out-of-memory point was priced for memory
  // alone).
  std::vector<const Priced*> best, plain_best, cp_best;
  std::map<std::pair<std::vector<int>, int>, const Priced*> by_mesh;
  std::map<std::string, const Priced*> by_experts;
  auto keep_best = [](std::vector<const Priced*>& list, const Priced* p, int list_keep) {
    auto at = std::find_if(list.begin(), list.end(), [&](const Priced* q) { return grid_better(p->report, q->report); });
    if (at == list.end() && static_cast<int>(list.size()) >= list_keep) return;
    list.insert(at, p);
    if (static_cast<int>(list.size()) > list_keep) list.pop_back();
  };
  auto keep_first_best = [](const Priced*& slot, const Priced* p) {
    if (slot == nullptr || grid_better(p->report, slot->report)) slot = p;
  };
  for (size_t k = 0; k < tasks.size(); ++k) {
    for (const Priced& p : priced[k]) {
      ++grid.points;
      grid.feasible += p.report.feasible;
      if (tasks[k].cp > 1) keep_best(cp_best, &p, 1);
      else keep_best(plain_best, &p, keep);
      if (experts > 0) keep_first_best(by_experts[p.ep.empty() ? p.ep : p.ep.substr(1)], &p);  // without the ','
      keep_first_best(by_mesh[p.mesh], &p);
      keep_best(best, &p, keep);
    }
    grid.truncated |= cut[k] != 0;
  }
  std::map<const Priced*, GridPoint> made;
  auto point = [&](const Priced* p) -> const GridPoint& {
    auto it = made.find(p);
    if (it == made.end()) {
      Scheme s = make_scheme(p->spec, g, c, {});
      CostReport r = evaluate(g, c, s);
      it = made.emplace(p, GridPoint{std::move(s), std::move(r)}).first;
    }
    return it->second;
  };
  for (const Priced* p : best) grid.best.push_back(point(p));
  for (const auto& [key, p] : by_mesh) grid.best_by_mesh.emplace(key, point(p));
  for (const auto& [key, p] : by_experts) grid.best_by_experts.emplace(key, point(p));
  for (const Priced* p : plain_best) grid.starts.push_back(point(p));
  for (const Priced* p : cp_best) grid.starts.push_back(point(p));
  return grid;
}

}  // namespace autoddl::search
