// The calibration-coverage table (see coverage_report.hpp).
#include "coverage_report.hpp"

#include <cstdio>

#include "autoddl/costmodel/calibration_coverage.hpp"
#include "autoddl/costmodel/bytes_text.hpp"

namespace autoddl::cli {

nlohmann::json print_calibration_coverage(const costmodel::IterationPlan& plan, const std::string& calibration) {
  using namespace costmodel;
  const std::vector<CollectiveNeed> needs = collectives_needed(plan);
  nlohmann::json rows = nlohmann::json::array();
  if (needs.empty()) return rows;
  std::printf("\n  calibration coverage (%s): the collectives this scheme runs\n", calibration.c_str());
  std::printf("    %-15s %4s %6s %8s %7s %-9s %-23s  %s\n", "collective", "dim", "ranks", "per_node", "groups",
              "span", "sizes (nccl-tests)", "source");
  int missing = 0;
  for (const CollectiveNeed& n : needs) {
    std::string source(coverage_source_name(n.source));
    if (n.source == CoverageSource::measured_extrapolated)
      source += " (measured " + costmodel::bytes_text(n.measured_min_bytes) + " - " + costmodel::bytes_text(n.measured_max_bytes) + ")";
    if (!n.calibration_applies) source = "not calibrated: stage sends use the cluster's link tier";
    if (n.calibration_applies && n.source != CoverageSource::measured) ++missing;
    const std::string sizes = costmodel::bytes_text(n.min_bytes) + " - " + costmodel::bytes_text(n.max_bytes);
    std::printf("    %-15s %4s %6d %8d %7d %-9s %-23s  %s\n", std::string(collective_info(n.kind).name).c_str(),
                (std::to_string(n.mesh_dim) + (n.stage_send ? "p" : "")).c_str(), n.group.ranks,
                n.group.ranks_per_node, n.groups_per_node, n.crosses_nodes ? "nodes" : "one node", sizes.c_str(),
                source.c_str());
    nlohmann::json r = {{"collective", collective_info(n.kind).name},
                        {"mesh_dim", n.mesh_dim},
                        {"stage_send", n.stage_send},
                        {"ranks", n.group.ranks},
                        {"ranks_per_node", n.group.ranks_per_node},
                        {"groups_per_node", n.groups_per_node},
                        {"crosses_nodes", n.crosses_nodes},
                        {"min_bytes", n.min_bytes},
                        {"max_bytes", n.max_bytes},
                        {"source", n.calibration_applies ? std::string(coverage_source_name(n.source))
                                                         : std::string("not calibrated")}};
    if (n.source == CoverageSource::measured || n.source == CoverageSource::measured_extrapolated) {
      r["measured_min_bytes"] = n.measured_min_bytes;
      r["measured_max_bytes"] = n.measured_max_bytes;
    }
    rows.push_back(std::move(r));
  }
  if (missing > 0) {
    std::printf("    %d of %zu not measured with the plan's group shape and sizes: `autoddl calibrate --plan-for "
                "SCHEME` prints the nccl-tests commands that measure them\n",
                missing, needs.size());
  }
  std::printf("    (groups: groups of the dim with ranks on one node, sharing its NICs; dim Np: the pipeline's "
              "stage sends over mesh dim N)\n");
  return rows;
}

}  // namespace autoddl::cli
