// Re-partition from the found scheme (see rebalance.hpp).
#include "rebalance.hpp"

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/search/assignment.hpp"
#include "autoddl/search/coordinate_descent.hpp"
#include "autoddl/search/pipeline.hpp"
#include "autoddl/search/scheme_map.hpp"

namespace autoddl::search {

using namespace costmodel;

bool rebalance_stages(const Graph& g, const ClusterSpec& c, const TableOptions& staged, Scheme& scheme,
                      CostReport& report, double time_limit_s) {
  if (staged.pipeline_dim < 0 || time_limit_s <= 0) return false;
  const int stages = staged.mesh_shape[staged.pipeline_dim];
  const CostTables ref(g, c, single_stage(staged));  // per-layer costs of the scheme's choices
  std::vector<int> choice;
  if (!from_signatures(ref, scheme.op_sigs, &scheme.param_storage, choice, false)) return false;
  const StagePlan plan = partition_stages(ref, choice, stages, staged.virtual_stages);
  if (plan.op_chunk == scheme.op_chunk) return false;  // the same partition: nothing to gain
  TableOptions o = staged;
  o.op_stage = plan.op_stage;
  if (o.virtual_stages > 1) o.op_chunk = plan.op_chunk;
  const CostTables t(g, c, o);
  Assignment a(t, choice);
  CdOptions cd;
  cd.time_limit_s = time_limit_s;
  coordinate_descent(a, make_coordinates(t, false), cd);
  Scheme s = to_scheme(t, a.choice(), scheme.name);
  keep_framework_options(scheme, s);
  const CostReport r = evaluate(g, c, s);
  if (!ranks_above(r, report)) return false;
  scheme = std::move(s);
  report = r;
  return true;
}

}  // namespace autoddl::search
