// The Megatron-LM grid walk (see megatron_grid.hpp).
#include "megatron_grid.hpp"

#include <algorithm>
#include <chrono>
#include <string>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"

namespace autoddl::search {

using namespace costmodel;

bool grid_better(const CostReport& a, const CostReport& b) {
  if (a.feasible != b.feasible) return a.feasible;
  return a.feasible ? a.iteration_s < b.iteration_s : a.peak_memory_bytes < b.peak_memory_bytes;
}

MegatronGrid megatron_grid(const Graph& g, const ClusterSpec& c, double time_limit_s, int keep) {
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  const int devices = c.total_gpus();
  MegatronGrid grid;
  auto offer = [&](Scheme&& s, const CostReport& r) {
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
        for (int sp = 0; sp <= (tp > 1 ? 1 : 0); ++sp) {
          for (const char* rc : {"none", "selective", "full"}) {
            if (elapsed() > time_limit_s) {
              grid.truncated = true;
              break;
            }
            const std::string spec = "megatron:tp=" + std::to_string(tp) + ",pp=" + std::to_string(pp) +
                                     ",dp=" + std::to_string(dp) + ",mb=" + std::to_string(mb) +
                                     ",sp=" + std::to_string(sp) + ",recompute=" + rc;
            Scheme s;
            try {
              s = make_scheme(spec, g, c, {});
            } catch (const InputError&) {
              break;  // this (tp, pp, dp, mb) does not exist for the model
            }
            ++grid.points;
            const CostReport r = evaluate(g, c, s);
            grid.feasible += r.feasible;
            offer(std::move(s), r);
            if (r.feasible) break;  // fits: more recompute only costs time
          }
        }
      }
    }
  }
  return grid;
}

}  // namespace autoddl::search
