// autoddl's Strategy <-> AutoDist's Strategy message (autodist_proto.hpp's tree), field by field
// as docs/autodist-format.md tabulates:
//   var               -> node_config[].var_name "<var>:0" (a TF tensor name, as AutoDist's builders
//                        write var.name); parts -> part_config[].var_name "<var>/part_<i>:0"
//   axis, shards      -> partitioner "1,<shards>,1" (one entry per dimension of the variable)
//   uneven            -> implied: AutoDist shards unevenly exactly when shards do not divide the axis
//   PS server n       -> PSSynchronizer.reduction_destination "<host n>:CPU:0"
//   local_replication, sync -> the same fields; staleness 0
//   AR group          -> AllReduceSynchronizer.group
//   AR compressor     -> none: NoneCompressor, fp16: HorovodCompressor
//   AR algorithm      -> auto: NCCL (NCCL's tuner picks, as autoddl's auto does), ring: RING;
//                        tree and hierarchical have no AutoDist spec: NCCL, with a note (lossy)
//   the cluster's GPUs -> graph_config.replicas "<host n>:GPU:<g>"
// Hosts name the cluster's nodes: a resource spec's addresses (autodist_resource_spec.hpp) or
// node0, node1, ... Reading back: NCCL and AUTO -> auto, RING -> ring; HorovodCompressorEF -> fp16
// with a note (the same bytes; error feedback changes only convergence); PowerSGD, staleness > 0,
// a reduction destination on no known host, or replicas that are not the cluster's GPUs are
// refused (InputError naming the field): autoddl cannot price them.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/sync/strategy.hpp"

namespace autoddl::sync {

using AutodistNote = std::function<void(const std::string&)>;

// "node0" .. "node<nodes-1>": the hosts when no resource spec names them.
std::vector<std::string> default_autodist_hosts(int nodes);

// `s` must be valid for `vars` and `c` (validate_strategy); hosts.size() == c.nodes. `note`
// gets one line per lossy mapping kind (with how many shards it touched).
nlohmann::json strategy_to_autodist(const Strategy& s, const std::vector<Variable>& vars,
                                    const costmodel::ClusterSpec& c, const std::vector<std::string>& hosts,
                                    const AutodistNote& note = {});

// The tree back to a Strategy (id from the message's id, builder "autodist"), validated against
// the model and cluster. Throws InputError(source, "<field path>", reason).
Strategy strategy_from_autodist(const nlohmann::json& tree, const std::vector<Variable>& vars,
                                const costmodel::ClusterSpec& c, const std::vector<std::string>& hosts,
                                const std::string& source, const AutodistNote& note = {});

}  // namespace autoddl::sync
