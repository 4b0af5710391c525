// `autoddl clusters [--json [FILE]]`: the built-in cluster presets with their key figures, or as
// JSON the presets' cluster files (docs/cluster-json.md), each of which --cluster reads back.
#include <cstdio>
#include <iostream>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/io.hpp"
#include "cli_util.hpp"
#include "commands.hpp"

namespace autoddl::cli {
namespace {

struct ClustersOptions {
  std::string json_file;
};

int run_clusters(const ClustersOptions& opt, bool json) {
  using namespace costmodel;
  nlohmann::json rows = nlohmann::json::array();
  if (!json) {
    std::printf("%-11s %5s %4s %-14s %9s %8s %9s %-9s %9s %-8s\n", "preset", "nodes", "gpus",
                "gpu", "fp16", "memory", "hbm", "intra", "intra bw", "network");
    std::printf("%-11s %5s %4s %-14s %9s %8s %9s %-9s %9s %-8s\n", "", "", "/node", "",
                "(TFLOP/s)", "(GB)", "(GB/s)", "", "(GB/s)", "(GB/s/node)");
  }
  for (const std::string& name : preset_names()) {
    ClusterSpec c = resolve_cluster(name);
    // Each row is a cluster file as the loader reads it (what the tool writes, it reads): the
    // key figures, derived from its fields, are the text table's alone.
    rows.push_back(cluster_to_json(c));
    if (!json) {
      char net[64];
      std::snprintf(net, sizeof net, "%dx%.1f %s", c.inter.nics_per_node,
                    c.inter.nic_bw_bytes_per_s / 1e9, c.inter.topology.c_str());
      std::printf("%-11s %5d %4d %-14s %9.1f %8.1f %9.0f %-9s %9.1f %s\n", name.c_str(), c.nodes,
                  c.gpus_per_node, c.gpu.name.c_str(), c.gpu.peak_flops(DType::fp16) / 1e12,
                  c.gpu.memory_bytes / 1e9, c.gpu.hbm_bytes_per_s / 1e9, c.intra.fabric.c_str(),
                  c.intra.bw_bytes_per_s / 1e9, net);
    }
  }
  if (json) emit_json(rows, opt.json_file);
  return 0;
}

}  // namespace

RunFn setup_clusters(CLI::App& sub) {
  auto opt = std::make_shared<ClustersOptions>();
  sub.add_option("--json", opt->json_file,
                 "Write the presets as a JSON array of cluster files (full specs with sources; each loads back "
                 "with --cluster) to FILE (stdout if omitted)")
      ->expected(0, 1);
  sub.footer("Any command taking --cluster also accepts a path to a cluster JSON (docs/cluster-json.md).");
  return [opt, &sub] { return run_clusters(*opt, sub.count("--json") > 0); };
}

}  // namespace autoddl::cli
