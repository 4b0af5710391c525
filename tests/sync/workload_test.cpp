// AutoSync's workloads (issue 32 item 2): a sync model not given `batch` runs AutoSync's
// per-replica batch on every GPU of the cluster; what the user gives is kept.
#include "autoddl/sync/workload.hpp"

#include <catch2/catch.hpp>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/zoo.hpp"

using namespace autoddl;
using namespace autoddl::sync;

TEST_CASE("a sync workload is the per-replica batch times the cluster's GPUs", "[sync][workload]") {
  const costmodel::ClusterSpec a = costmodel::resolve_cluster("autosync-a");  // 11 x 1 GPU
  const costmodel::ClusterSpec b = costmodel::resolve_cluster("autosync-b");  // 4 x 4 GPUs
  REQUIRE(a.total_gpus() == 11);
  REQUIRE(b.total_gpus() == 16);
  CHECK(sync_workload("vgg16", {}, a).knobs.at("batch") == "352");
  CHECK(sync_workload("vgg16", {}, b).knobs.at("batch") == "512");
  CHECK(sync_workload("ncf", {}, a).knobs.at("batch") == "2816");
  const SyncWorkload bert = sync_workload("bert", {{"size", "large"}}, b);
  CHECK(bert.knobs.at("batch") == "512");
  CHECK(bert.knobs.at("seq") == "128");
  CHECK(bert.knobs.at("size") == "large");
  CHECK_THAT(bert.note, Catch::Contains("32 per replica x 16 GPUs"));
  // The graph really trains that batch: the step's compute grows with it.
  const costmodel::Graph at_zoo = costmodel::build_zoo_model("vgg16", {});
  const costmodel::Graph at_autosync = costmodel::build_zoo_model("vgg16", sync_workload("vgg16", {}, a).knobs);
  CHECK(at_autosync.forward_flops() == Approx(11 * at_zoo.forward_flops()).epsilon(1e-9));
}

TEST_CASE("a sync workload keeps the knobs the user gives and leaves other models alone", "[sync][workload]") {
  const costmodel::ClusterSpec a = costmodel::resolve_cluster("autosync-a");
  const SyncWorkload given = sync_workload("vgg16", {{"batch", "64"}}, a);
  CHECK(given.knobs.at("batch") == "64");
  CHECK(given.note.empty());
  const SyncWorkload seq = sync_workload("bert", {{"seq", "512"}}, a);
  CHECK(seq.knobs.at("seq") == "512");
  CHECK(seq.knobs.at("batch") == "352");
  CHECK(per_replica_workload("gpt") == nullptr);
  CHECK(sync_workload("gpt", {{"size", "125m"}}, a).knobs == std::map<std::string, std::string>{{"size", "125m"}});
  CHECK(sync_workload("gpt", {}, a).note.empty());
}
