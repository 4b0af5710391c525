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

namespace autoddl::search {

using namespace costmodel;

bool grid_better(const CostReport& a, const CostReport& b) {
  if (a.feasible != b.feasible) return a.feasible;
  return a.feasible ? a.iteration_s < b.iteration_s : a.peak_memory_bytes < b.peak_memory_bytes;
}

namespace {

// Consecutive repeated blocks (transformer layers) of the graph: what pp × interleave must divide.
// Multi-token-prediction blocks are not counted: Megatron places them on the last stage.
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

// The option suffixes tried at one (tp, pp, dp, mb, sp) point, each with its own recompute walk:
// the plain SC'21 layout, then today's Megatron-LM/NeMo options together (the distributed
// optimizer when dp > 1, userbuffers tp overlap with sp), and those with the interleaved schedule
// and overlapped p2p at one layer per chunk (v = layers per stage: the most chunks, so the
// smallest bubble and in-flight activations; pp_overlap hides the extra sends).
std::vector<std::string> option_variants(int blocks, int pp, int dp, int sp) {
  std::vector<std::string> out = {""};
  std::string modern = dp > 1 ? ",dist_opt=1" : "";
  if (sp) modern += ",tp_overlap=1";
  if (!modern.empty()) out.push_back(modern);
  if (pp > 1 && blocks % pp == 0 && blocks / pp > 1) {
    out.push_back(modern + ",interleave=" + std::to_string(blocks / pp) + ",pp_overlap=1");
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

}  // namespace

MegatronGrid megatron_grid(const Graph& g, const ClusterSpec& c, double time_limit_s, int keep) {
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  const int devices = c.total_gpus();
  const int blocks = count_blocks(g);
  const int64_t experts = routed_experts(g);
  MegatronGrid grid;
  auto offer = [&](Scheme&& s, const CostReport& r, const std::string& ep) {
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
    auto at = std::find_if(grid.best.begin(), grid.best.end(), [&](const GridPoint& p) { return grid_better(r, p.report); });
    if (at == grid.best.end() && static_cast<int>(grid.best.size()) >= keep) return;
    grid.best.insert(at, GridPoint{std::move(s), r});
    if (static_cast<int>(grid.best.size()) > keep) grid.best.pop_back();
  };
  for (int tp = 1; tp <= devices && !grid.truncated; ++tp) {
    if (devices % tp) continue;
    for (int pp = 1; pp <= devices / tp && !grid.truncated; ++pp) {
      if ((devices / tp) % pp) continue;
      const int dp = devices / tp / pp;
      if (g.batch % dp) continue;
      const int64_t per_replica = g.batch / dp;
      for (int64_t mb = 1; mb <= per_replica && !grid.truncated; mb *= 2) {
        if (per_replica % mb) continue;
        for (const std::string& ep : expert_variants(experts, tp, dp)) {
          for (int sp = 0; sp <= (tp > 1 ? 1 : 0); ++sp) {
            bool exists = true;  // the plain layout exists: (tp, pp, dp, mb, ep) fits the model
            for (const std::string& options : option_variants(blocks, pp, dp, sp)) {
              if (!exists || grid.truncated) break;
              for (const char* rc : {"none", "selective", "full"}) {
                if (elapsed() > time_limit_s) {
                  grid.truncated = true;
                  break;
                }
                const std::string spec = "megatron:tp=" + std::to_string(tp) + ",pp=" + std::to_string(pp) +
                                         ",dp=" + std::to_string(dp) + ",mb=" + std::to_string(mb) + ep +
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
                offer(std::move(s), r, ep);
                if (r.feasible) break;  // fits: more recompute only costs time
              }
            }
          }
        }
      }
    }
  }
  return grid;
}

}  // namespace autoddl::search
