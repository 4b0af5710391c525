// AutoDist-format measurements read into autoddl's dataset (issue 32 item 5): the layout of
// AutoSync's released dataset (petuum/autodist autodist/simulator/dataset/README.md), one
// <ID> per measured run:
//   DIR/strategies/<ID>       the strategy: binary (Strategy.serialize()), text or JSON form
//   DIR/runtime/<ID>[.yml]    YAML: `average: <s>` and/or `runtime: <s> | [<s>, ...]`, seconds per
//                             iteration (the mean, and the trials it is the mean of)
//   DIR/resource_spec/<ID>[.yml]  AutoDist's resource_spec.yml (optional when one spec is given)
// Each run becomes one record of `autoddl sync dataset`'s JSONL (dataset.hpp), features computed
// from the strategy, model and cluster, so `sync train|eval|transfer` take it. docs/autodist-format.md.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/graph.hpp"
#include "autoddl/sync/dataset.hpp"

namespace autoddl::sync {

// AutoDist's resource_spec.yml (autodist/resource_spec.py): `nodes:` a list of {address, gpus:
// [indices], cpus, chief, network_bandwidth (Gbit/s; AutoDist's default 1), ssh_config}; other
// top-level keys (ssh) are AutoDist's SSH settings and are ignored.
struct AutodistNode {
  std::string address;
  std::vector<int> gpus;
  bool chief = false;
  double network_bandwidth_gbps = 0;  // 0: not given
};
struct AutodistResourceSpec {
  std::vector<AutodistNode> nodes;
};

AutodistResourceSpec parse_resource_spec(const std::string& yaml, const std::string& source);
AutodistResourceSpec load_resource_spec(const std::string& path);
// The spec as resource_spec.yml (the cluster's nodes under the given hosts, node 0 the chief).
std::string resource_spec_yaml(const costmodel::ClusterSpec& c, const std::vector<std::string>& hosts);
// The node addresses, in the spec's order (node i of the cluster = nodes[i]), after checking the
// spec has the cluster's nodes and GPUs per node; throws InputError(source, "nodes...", reason).
std::vector<std::string> resource_spec_hosts(const AutodistResourceSpec& spec, const costmodel::ClusterSpec& c,
                                             const std::string& source);

// A runtime file: the label (average, else the mean of runtime) and the trials (runtime, else
// [average]); every number finite and > 0.
struct AutodistRuntime {
  double runtime_s = 0;
  std::vector<double> runtimes_s;
};
AutodistRuntime parse_runtime(const std::string& yaml, const std::string& source);

struct AutodistImport {
  DatasetPair pair;             // model, knobs, cluster as the records name them (the key)
  // The knobs `g` was built with (pair.knobs and the batch workload.hpp adds), stored in each
  // record so that re-featuring rebuilds the same graph.
  std::map<std::string, std::string> knobs;
  std::string resource_spec;    // used for runs without DIR/resource_spec/<ID> ("" = none)
  std::function<void(const std::string&)> note;
};

// Reads every run of `in_dir` (sorted by ID) and writes out_dir/records.jsonl and schema.json,
// both atomically, only once every run has been read; records.jsonl must not exist yet.
// Record i has key "<pair>#<i>", builder "imported", "autodist_id" <ID>. Throws InputError naming
// the file and field of the first problem. Returns the number of records.
int64_t import_autodist_dataset(const std::string& in_dir, const costmodel::Graph& g, const costmodel::ClusterSpec& c,
                                const AutodistImport& options, const std::string& out_dir);

}  // namespace autoddl::sync
