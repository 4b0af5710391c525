// SimReport: one simulated iteration of a scheme next to the analytical model's estimate of the
// same scheme. The breakdown is taken on the critical device (the computing device idle the
// least): each instant is compute, else exposed boxing, else exposed pipeline send/recv, else
// exposed gradient sync, else idle (the bubble), so the parts sum to the iteration as the
// CostReport's do. Collectives on that device are compared with the α-β time the analytical
// model charged for them: a collective slower than that was contended. When the two iteration
// times differ by more than the tolerance, `discrepancy` names the part that differs most and,
// for a communication part, whether its collectives were contended (and on which links) or
// ran at their α-β time but overlapped differently. A framework overlap the scheme uses
// (tp_overlap, pp_overlap) is listed with the seconds it hid under compute on the critical
// device, simulated and analytical (its stage), since hidden time is where the two models can
// part without any collective running slower.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "autoddl/costmodel/graph.hpp"
#include "autoddl/sim/lowering.hpp"
#include "autoddl/sim/simulate.hpp"

namespace autoddl::sim {

// One part of the iteration on the critical device, simulated and analytical.
struct ReportPart {
  std::string name;  // compute, boxing, send_recv, grad_sync, bubble
  double simulated_s = 0;
  double analytical_s = 0;
};

// The collectives of one phase and kind on the critical device.
struct CollectiveUse {
  Phase phase = Phase::none;
  costmodel::CollectiveKind kind = costmodel::CollectiveKind::all_reduce;
  int64_t count = 0;
  double simulated_s = 0;   // summed durations
  double alpha_beta_s = 0;  // what the analytical model charged for them
};

// A framework overlap the scheme uses: seconds during which its communication ran under compute
// on the critical device (simulated), and what evaluate() hid with it on that device's stage.
// The simulated figure counts every send the device takes part in (pp_overlap: sends and
// receives, both boundaries); the analytical one a stage's forward receives and backward sends.
struct OverlapUse {
  std::string name;  // tp_overlap, pp_overlap
  double simulated_hidden_s = 0;
  double analytical_hidden_s = 0;
};

struct SimReport {
  std::string model, cluster, scheme, mesh;
  std::string fidelity;
  int devices = 0, computing_devices = 0, replicas_folded = 1;
  bool merged_compute = false;
  int stages = 1, micro_batches = 1;
  int64_t tasks = 0;
  double iteration_s = 0;
  double compute_s = 0, comm_s = 0, exposed_comm_s = 0;  // max over computing devices
  double bubble_s = 0;                                   // idle time of the critical device
  double analytical_iteration_s = 0;
  double relative_difference = 0;  // (simulated − analytical) / analytical
  int critical_device = 0;
  std::vector<ReportPart> breakdown;
  std::vector<CollectiveUse> collectives;
  std::vector<OverlapUse> overlaps;  // empty when the scheme uses none
  std::vector<LinkUse> busiest_links;
  int64_t events = 0;
  double wall_s = 0;           // the simulation's own wall time
  double lowering_wall_s = 0;  // evaluate() + lowering
  // Beyond the tolerance: one line naming the cause, the part that differs most, and the
  // links its collectives were contended on (none when they ran at their α-β time).
  std::string discrepancy;  // empty within the tolerance
  std::string discrepancy_part;
  std::vector<std::string> contended_links;
};

SimReport make_sim_report(const costmodel::Graph& graph, const LoweredProgram& lowered, const SimResult& result,
                          Fidelity fidelity, double tolerance = 0.10);
nlohmann::json sim_report_to_json(const SimReport& r);

// Everything one `autoddl simulate` needs: lower, simulate, report. The GPUs run at the peak of
// the plan's training dtype (LoweredProgram::train_dtype); options.dtype is not used.
struct SchemeSimulation {
  LoweredProgram lowered;
  SimResult result;
  SimReport report;
};
SchemeSimulation simulate_scheme(const costmodel::Graph& graph, const costmodel::ClusterSpec& cluster,
                                 const costmodel::Scheme& scheme, const SimOptions& options = {},
                                 const LoweringOptions& lowering = {});

}  // namespace autoddl::sim
