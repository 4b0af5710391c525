#include "autoddl/sync/features.hpp"

#include <algorithm>
#include <map>

namespace autoddl::sync {

const std::vector<std::string>& feature_names() {
  static const std::vector<std::string> names = {
      "ps_transmission_max_s", "ps_transmission_sum_s", "ps_overhead_max_s", "ps_overhead_sum_s",
      "ar_transmission_max_s", "ar_transmission_sum_s", "ar_overhead_max_s", "ar_overhead_sum_s",
      "ps_max_s",              "ps_sum_s",              "ar_max_s",          "ar_sum_s",
      "worker_nic_s",          "analytical_iteration_s", "exposed_sync_s",
      "var_count",             "var_bytes_mean",        "var_bytes_max",     "sparse_fraction",
      "shards",                "ps_shard_fraction",     "servers",           "groups",
      "local_replication_fraction", "fp16_fraction",
      "workers",               "nodes",                 "gpus_per_node",     "nic_bytes_per_s"};
  return names;
}

std::vector<double> strategy_features(const std::vector<Variable>& vars, const Strategy& s,
                                      const Evaluation& e, const costmodel::ClusterSpec& c) {
  double pt_max = 0, pt_sum = 0, po_max = 0, po_sum = 0;
  for (const ServerTerms& t : e.servers) {
    pt_max = std::max(pt_max, t.transmission_s);
    pt_sum += t.transmission_s;
    po_max = std::max(po_max, t.overhead_s + t.local_s);
    po_sum += t.overhead_s + t.local_s;
  }
  double at_max = 0, at_sum = 0, ao_max = 0, ao_sum = 0;
  for (const GroupTerms& g : e.groups) {
    at_max = std::max(at_max, g.transmission_s);
    at_sum += g.transmission_s;
    ao_max = std::max(ao_max, g.overhead_s);
    ao_sum += g.overhead_s;
  }
  double bytes_sum = 0, bytes_max = 0, sparse = 0;
  for (const Variable& v : vars) {
    bytes_sum += v.bytes;
    bytes_max = std::max(bytes_max, v.bytes);
    sparse += v.sparse ? 1 : 0;
  }
  double shards = 0, ps = 0, local = 0, fp16 = 0;
  for (const VarConfig& vc : s.vars) {
    for (const Synchronizer& p : vc.parts) {
      shards += 1;
      ps += p.arch == Arch::ps ? 1 : 0;
      local += p.arch == Arch::ps && p.local_replication ? 1 : 0;
      fp16 += p.arch == Arch::all_reduce && p.compressor == Compressor::fp16 ? 1 : 0;
    }
  }
  const double n = std::max<double>(1, static_cast<double>(vars.size()));
  const double sh = std::max(1.0, shards);
  return {pt_max, pt_sum, po_max, po_sum, at_max, at_sum, ao_max, ao_sum,
          e.ps_max_s, e.ps_sum_s, e.ar_max_s, e.ar_sum_s, e.worker_nic_s, e.iteration_s, e.exposed_sync_s,
          static_cast<double>(vars.size()), bytes_sum / n, bytes_max, sparse / n,
          shards, ps / sh, static_cast<double>(e.servers.size()), static_cast<double>(e.groups.size()),
          local / sh, fp16 / sh,
          static_cast<double>(c.total_gpus()), static_cast<double>(c.nodes),
          static_cast<double>(c.gpus_per_node), c.node_nic_bw_bytes_per_s()};
}

}  // namespace autoddl::sync
