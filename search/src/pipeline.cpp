// Stage partition by min-max DP over contiguous layers (see pipeline.hpp).
#include "autoddl/search/pipeline.hpp"

#include <algorithm>
#include <limits>

#include "autoddl/costmodel/error.hpp"

namespace autoddl::search {

std::vector<int> layer_of_ops(const costmodel::Graph& g, int& layers) {
  std::vector<int> layer(g.ops.size(), 0);
  layers = 0;
  std::string current;
  bool seen = false;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const std::string& b = g.ops[i].block;
    if (!b.empty() && (!seen || b != current)) {
      if (seen) ++layers;
      current = b;
      seen = true;
    }
    layer[i] = layers;
  }
  layers += 1;
  return layer;
}

TableOptions single_stage(TableOptions o) {
  o.op_stage.clear();
  o.op_chunk.clear();
  o.virtual_stages = 1;
  o.overlap_p2p = false;
  return o;
}

StagePlan partition_stages(const CostTables& ref, const std::vector<int>& choice, int stages, int v) {
  const auto& g = ref.graph();
  int L = 0;
  const std::vector<int> layer = layer_of_ops(g, L);
  const int parts = stages * v;  // chunks, each on stage k % stages
  if (L < parts) {
    throw InputError("--mesh", "", "a pipeline of " + std::to_string(stages) + " stages" +
                                       (v > 1 ? " × " + std::to_string(v) + " chunks" : std::string()) +
                                       " needs at least " + std::to_string(parts) + " layers (Op::block runs); " +
                                       g.name + " has " + std::to_string(L));
  }
  const int m = ref.options().micro_batches;
  const double flight0 = in_flight(0, ref.stages(), m);
  std::vector<double> time(L, 0), param(L, 0), act(L, 0);
  for (int i = 0; i < ref.ops(); ++i) {
    const int c = choice[i];
    time[layer[i]] += ref.node_s(i, c);
    act[layer[i]] += ref.activation_bytes(i, c) / flight0;
    param[layer[i]] += ref.memory_bytes(i, c) - ref.activation_bytes(i, c);
  }
  for (int k = 0; k < ref.terms(); ++k) {  // boxing belongs to the consumer's layer
    time[layer[ref.term_members(k)[1]]] += ref.term_cost(k, choice.data());
  }
  std::vector<double> pt(L + 1, 0), pp(L + 1, 0), pa(L + 1, 0);
  for (int l = 0; l < L; ++l) {
    pt[l + 1] = pt[l] + time[l];
    pp[l + 1] = pp[l] + param[l];
    pa[l + 1] = pa[l] + act[l];
  }
  const double cap = ref.capacity_bytes(0) / v;  // per chunk
  auto memory = [&](int a, int b, int k) {
    return pp[b] - pp[a] + (pa[b] - pa[a]) * in_flight(k % stages, stages, m, v);
  };
  const double inf = std::numeric_limits<double>::infinity();
  // best[s][j]: slowest chunk when chunks 0..s-1 hold layers [0, j); two passes: with the
  // memory limit, then (if nothing fits) without it.
  StagePlan plan;
  for (int pass = 0; pass < 2; ++pass) {
    const bool limit = pass == 0;
    std::vector<std::vector<double>> best(parts + 1, std::vector<double>(L + 1, inf));
    std::vector<std::vector<int>> from(parts + 1, std::vector<int>(L + 1, -1));
    best[0][0] = 0;
    for (int s = 1; s <= parts; ++s) {
      for (int j = s; j <= L - (parts - s); ++j) {
        for (int i = s - 1; i < j; ++i) {
          if (best[s - 1][i] == inf) continue;
          if (limit && memory(i, j, s - 1) > cap) continue;
          const double v = std::max(best[s - 1][i], pt[j] - pt[i]);
          if (v < best[s][j]) {
            best[s][j] = v;
            from[s][j] = i;
          }
        }
      }
    }
    if (best[parts][L] == inf) continue;
    std::vector<int> start(parts + 1, L);
    for (int s = parts, j = L; s > 0; --s) {
      start[s - 1] = from[s][j];
      j = from[s][j];
    }
    plan.fits = limit;
    plan.op_stage.resize(ref.ops());
    plan.op_chunk.resize(ref.ops());
    for (int i = 0; i < ref.ops(); ++i) {
      int k = 0;
      while (k + 1 < parts && layer[i] >= start[k + 1]) ++k;
      plan.op_chunk[i] = k;
      plan.op_stage[i] = k % stages;
    }
    plan.stage_time_s.assign(stages, 0);
    plan.stage_memory_bytes.assign(stages, 0);
    for (int k = 0; k < parts; ++k) {
      plan.stage_time_s[k % stages] += pt[start[k + 1]] - pt[start[k]];
      plan.stage_memory_bytes[k % stages] += memory(start[k], start[k + 1], k);
    }
    return plan;
  }
  AUTODDL_CHECK(false) << "stage partition found nothing although layers >= stages";
  return plan;
}

}  // namespace autoddl::search
