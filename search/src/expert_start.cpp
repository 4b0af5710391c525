// One descent from an expert layout (see expert_start.hpp).
#include "expert_start.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/search/assignment.hpp"
#include "reconcile.hpp"

namespace autoddl::search {

using namespace costmodel;

ExpertStart descend_from_expert(const Graph& g, const ClusterSpec& c, const GridPoint& p, const SearchOptions& so,
                                const std::string& label, double time_limit_s,
                                const std::function<void(const std::string&)>& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  ExpertStart run;
  const Scheme& e = p.scheme;
  const std::string name = e.name.substr(9);  // after "megatron:"
  run.row = {{"expert", name}, {"expert_iteration_s", p.report.iteration_s}};
  progress(label + ": tables for " + name);
  TableOptions o = table_options_of(e, static_cast<int>(g.ops.size()));
  o.zero_storage = so.zero_storage;
  o.sync_weight = so.sync_weight < 0 ? 1.0 : so.sync_weight;
  const CostTables t(g, c, o);
  std::vector<int> choice;
  if (!from_signatures(t, e.op_sigs, &e.param_storage, choice, false)) {
    run.row["skipped"] = "its signatures are not in the tables";
    return run;
  }
  auto as_scheme = [&](const std::vector<int>& ch) {
    Scheme s = to_scheme(t, ch, label);
    keep_framework_options(e, s);
    return s;
  };
  run.mapped = as_scheme(choice);
  run.mapped_report = evaluate(g, c, run.mapped);
  Assignment a(t, choice);
  const Coordinates co = make_coordinates(t, so.tie_layers);
  CdOptions cd;
  cd.neighbourhood = true;
  cd.time_limit_s = std::max(0.0, time_limit_s);
  cd.progress = [&](double obj, int sweeps) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "%s: from %s, sweep %d, objective %.4f s", label.c_str(), name.c_str(), sweeps, obj);
    progress(buf);
  };
  const CdStats st = coordinate_descent(a, co, cd);
  run.found = as_scheme(a.choice());
  run.found_report = evaluate(g, c, run.found);
  run.descended = true;
  run.row["start_objective_s"] = st.start_objective_s;
  run.row["objective_s"] = st.objective_s;
  run.row["moves"] = st.moves;
  run.row["joint_moves"] = st.joint_moves;
  run.row["time_limit_hit"] = st.time_limit_hit;
  // One objective (reconcile.hpp): descend again under the sync weight at which the tables equal
  // evaluate() of the found scheme, with the expert's overlaps; kept where evaluate() agrees.
  if (so.reconcile_objective && elapsed() < time_limit_s) {
    CdOptions ro = cd;
    ro.time_limit_s = time_limit_s - elapsed();
    const Reconciled rec = reconcile_objective(t, so.tie_layers, a.choice(), run.found_report, ro, 3, as_scheme);
    if (rec.improved) {
      run.found = as_scheme(rec.choice);
      run.found_report = rec.report;
    }
    run.row["reconciled"] = rec.details();
  }
  return run;
}

}  // namespace autoddl::search
