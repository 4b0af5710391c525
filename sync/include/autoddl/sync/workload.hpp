// The workloads AutoSync was evaluated on (issue 32 item 2). The zoo's `batch` knob is the
// global batch, and its defaults suit one GPU; AutoSync and AutoDist ran every replica with its
// own batch (AutoDist's simulator config: `model_batch_size` vgg16 32, bert 32 with
// `model_seq_len` 128, ncf 256; reference/autosync.md §4b), so a sync command that is not given
// `batch` trains the model at that per-replica batch times the cluster's GPUs.
#pragma once
#include <map>
#include <string>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/graph.hpp"

namespace autoddl::sync {

struct PerReplicaWorkload {
  const char* model;       // zoo name
  int batch;               // samples per replica per step
  const char* seq;         // sequence length knob, nullptr where the model has none
  bool from_autodist;      // AutoSync/AutoDist name it; otherwise assumed like the CNNs they name
};

// AutoSync's evaluation models; nullptr for any other model (a user's graph, GPT, ...).
const PerReplicaWorkload* per_replica_workload(const std::string& model);

struct SyncWorkload {
  std::map<std::string, std::string> knobs;  // the zoo knobs the model is built with
  std::string note;                          // how batch (and seq) were chosen; "" when nothing was added
};

// `knobs` with `batch` = per replica x cluster.total_gpus() (and BERT's seq 128) added where the
// model is one of AutoSync's and the knob is not given; any knob given is kept as it is.
SyncWorkload sync_workload(const std::string& model, const std::map<std::string, std::string>& knobs,
                           const costmodel::ClusterSpec& cluster);

// The zoo model built at sync_workload's knobs: what every sync command and dataset record of
// `model` on `cluster` trains.
costmodel::Graph build_workload_model(const std::string& model, const std::map<std::string, std::string>& knobs,
                                      const costmodel::ClusterSpec& cluster);

}  // namespace autoddl::sync
