#include "autoddl/sync/features.hpp"

#include <algorithm>
#include <map>

namespace autoddl::sync {

namespace {

// Times also given as a fraction of the model's compute (forward + backward, the same for every
// strategy of a list): the same fraction means the same thing on any model and cluster, which
// lets a tree's split on it serve every list.
const std::vector<std::string> kRelative = {"analytical_iteration_s", "duplex_iteration_s", "exposed_sync_s",
                                            "sync_end_s",             "ps_max_s",           "ps_duplex_end_s",
                                            "ar_sum_s",               "nic_ps_max_s",       "nic_max_s",
                                            "worker_nic_s",           "ps_lane_end_s",      "lane_iteration_s"};

}  // namespace

const std::vector<std::string>& feature_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n = {
        "ps_transmission_max_s", "ps_transmission_sum_s", "ps_overhead_max_s", "ps_overhead_sum_s",
        "ps_local_max_s",        "ps_local_sum_s",
        "ar_transmission_max_s", "ar_transmission_sum_s", "ar_overhead_max_s", "ar_overhead_sum_s",
        "ps_max_s",              "ps_sum_s",              "ar_max_s",          "ar_sum_s",
        "worker_nic_s",          "analytical_iteration_s", "exposed_sync_s",  "sync_end_s",
        "ps_duplex_end_s",       "nic_ps_max_s",          "nic_max_s",         "duplex_iteration_s",
        "compute_s",             "ps_lane_end_s",         "lane_iteration_s",
        "var_count",             "var_bytes_mean",        "var_bytes_max",     "sparse_fraction",
        "shards",                "ps_shard_fraction",     "ps_bytes_fraction", "servers",
        "groups",                "local_replication_fraction", "fp16_fraction",
        "workers",               "nodes",                 "gpus_per_node",     "nic_bytes_per_s"};
    for (const std::string& r : kRelative) n.push_back(r.substr(0, r.size() - 2) + "_per_compute");
    return n;
  }();
  return names;
}

std::vector<double> strategy_features(const std::vector<Variable>& vars, const Strategy& s,
                                      const Evaluation& e, const costmodel::ClusterSpec& c) {
  double pt_max = 0, pt_sum = 0, po_max = 0, po_sum = 0, pl_max = 0, pl_sum = 0;
  for (const ServerTerms& t : e.servers) {
    pt_max = std::max(pt_max, t.transmission_s);
    pt_sum += t.transmission_s;
    po_max = std::max(po_max, t.overhead_s);
    po_sum += t.overhead_s;
    pl_max = std::max(pl_max, t.local_s);
    pl_sum += t.local_s;
  }
  double at_max = 0, at_sum = 0, ao_max = 0, ao_sum = 0;
  for (const GroupTerms& g : e.groups) {
    at_max = std::max(at_max, g.transmission_s);
    at_sum += g.transmission_s;
    ao_max = std::max(ao_max, g.overhead_s);
    ao_sum += g.overhead_s;
  }
  double bytes_sum = 0, bytes_max = 0, sparse = 0;
  std::map<std::string, const Variable*> by_name;
  for (const Variable& v : vars) {
    bytes_sum += v.bytes;
    bytes_max = std::max(bytes_max, v.bytes);
    sparse += v.sparse ? 1 : 0;
    by_name[v.name] = &v;
  }
  double shards = 0, ps = 0, ps_bytes = 0, local = 0, fp16 = 0;
  for (const VarConfig& vc : s.vars) {
    auto it = by_name.find(vc.var);
    const double var_bytes = it == by_name.end() ? 0 : it->second->bytes;
    for (size_t i = 0; i < vc.parts.size(); ++i) {
      const Synchronizer& p = vc.parts[i];
      shards += 1;
      ps += p.arch == Arch::ps ? 1 : 0;
      if (p.arch == Arch::ps && it != by_name.end())
        ps_bytes += var_bytes * shard_fraction(*it->second, vc, static_cast<int>(i));
      local += p.arch == Arch::ps && p.local_replication ? 1 : 0;
      fp16 += p.arch == Arch::all_reduce && p.compressor == Compressor::fp16 ? 1 : 0;
    }
  }
  const double n = std::max<double>(1, static_cast<double>(vars.size()));
  const double sh = std::max(1.0, shards);
  const double compute_s = e.forward_s + e.backward_s;
  std::vector<double> x = {pt_max, pt_sum, po_max, po_sum, pl_max, pl_sum,
                           at_max, at_sum, ao_max, ao_sum,
                           e.ps_max_s, e.ps_sum_s, e.ar_max_s, e.ar_sum_s,
                           e.worker_nic_s, e.iteration_s, e.exposed_sync_s, e.sync_end_s,
                           e.ps_duplex_end_s, e.nic_ps_max_s, e.nic_max_s, e.duplex_iteration_s,
                           compute_s, e.ps_lane_end_s, e.lane_iteration_s,
                           static_cast<double>(vars.size()), bytes_sum / n, bytes_max, sparse / n,
                           shards, ps / sh, bytes_sum > 0 ? ps_bytes / bytes_sum : 0,
                           static_cast<double>(e.servers.size()), static_cast<double>(e.groups.size()),
                           local / sh, fp16 / sh,
                           static_cast<double>(c.total_gpus()), static_cast<double>(c.nodes),
                           static_cast<double>(c.gpus_per_node), c.node_nic_bw_bytes_per_s()};
  static const std::vector<size_t> relative = [] {
    const std::vector<std::string>& names = feature_names();
    std::vector<size_t> at;
    for (const std::string& r : kRelative)
      at.push_back(static_cast<size_t>(std::find(names.begin(), names.end(), r) - names.begin()));
    return at;
  }();
  for (size_t k : relative) x.push_back(compute_s > 0 ? x[k] / compute_s : 0);
  return x;
}

}  // namespace autoddl::sync
