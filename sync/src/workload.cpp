// AutoSync's per-replica workloads (workload.hpp).
#include "autoddl/sync/workload.hpp"

#include <array>

#include "autoddl/costmodel/zoo.hpp"

namespace autoddl::sync {

namespace {

// AutoDist's simulator config (autosync_simulator branch, linear_simulator.py: model_batch_size,
// model_seq_len) names vgg16, bert and ncf; the paper's MLPerf-style runs use 32 per replica for
// ResNet-101 as for VGG16. The zoo's other CNNs (not in the paper) are given the CNNs' 32.
constexpr std::array<PerReplicaWorkload, 7> kWorkloads = {{
    {"vgg16", 32, nullptr, true},
    {"resnet101", 32, nullptr, true},
    {"resnet50", 32, nullptr, false},
    {"densenet121", 32, nullptr, false},
    {"inception_v3", 32, nullptr, false},
    {"bert", 32, "128", true},
    {"ncf", 256, nullptr, true},
}};

}  // namespace

const PerReplicaWorkload* per_replica_workload(const std::string& model) {
  for (const PerReplicaWorkload& w : kWorkloads) {
    if (model == w.model) return &w;
  }
  return nullptr;
}

SyncWorkload sync_workload(const std::string& model, const std::map<std::string, std::string>& knobs,
                           const costmodel::ClusterSpec& cluster) {
  SyncWorkload out{knobs, ""};
  const PerReplicaWorkload* w = per_replica_workload(model);
  if (w == nullptr) return out;
  const int gpus = cluster.total_gpus();
  std::string added;
  if (!knobs.count("batch")) {
    out.knobs["batch"] = std::to_string(static_cast<long long>(w->batch) * gpus);
    added = "batch=" + out.knobs["batch"] + " (" + std::to_string(w->batch) + " per replica x " +
            std::to_string(gpus) + " GPUs)";
  }
  if (w->seq != nullptr && !knobs.count("seq")) {
    out.knobs["seq"] = w->seq;
    added += std::string(added.empty() ? "" : ", ") + "seq=" + w->seq;
  }
  if (!added.empty()) {
    out.note = model + " at AutoSync's workload: " + added +
               (w->from_autodist ? ", as AutoSync and AutoDist ran it" : ", assumed: the 32 of the CNNs AutoSync ran") +
               "; --set batch=N (the global batch) to choose another";
  }
  return out;
}

costmodel::Graph build_workload_model(const std::string& model, const std::map<std::string, std::string>& knobs,
                                      const costmodel::ClusterSpec& cluster) {
  return costmodel::build_zoo_model(model, sync_workload(model, knobs, cluster).knobs);
}

}  // namespace autoddl::sync
