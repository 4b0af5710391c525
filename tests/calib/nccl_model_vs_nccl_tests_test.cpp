// NCCL's model (costmodel/nccl_model.hpp) against public nccl-tests logs (tests/calib/data/
// nccl_tests_public/, each file citing its repository, path and commit): the predicted bus
// bandwidth per size, with the algorithm the log forced (NCCL_ALGO=RING) or NCCL's own choice.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <optional>
#include <string>

#include "autoddl/calib/nccl_model_fit.hpp"
#include "autoddl/calib/nccl_tests_parser.hpp"
#include "autoddl/costmodel/calibration.hpp"
#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/collective.hpp"
#include "autoddl/costmodel/nccl_model.hpp"

using namespace autoddl;
using costmodel::CollectiveKind;
using costmodel::NcclAlgo;

namespace {

struct Case {
  const char* file;
  CollectiveKind kind;
  const char* cluster;
  int nodes;
  std::optional<NcclAlgo> forced;  // the log's NCCL_ALGO, if it set one
  double min_bytes;                // the size range the bound below is asserted over
  double max_error;                // |predicted/measured busbw - 1|
  std::optional<costmodel::CommGroup> group = {};  // for headerless/ logs: ranks, ranks per node
};

calib::NcclTestsRun load(const Case& c) {
  const std::string path =
      std::string(AUTODDL_SOURCE_DIR) + "/tests/calib/data/nccl_tests_public/" + c.file;
  const auto runs = calib::load_nccl_tests_file(path, c.kind, c.group);
  REQUIRE(runs.size() == 1);
  return runs.front();
}

// NCCL's tables for the log's group on the case's cluster, with `fitted` applied if given.
costmodel::NcclTuning tuning(const Case& c, const calib::NcclTestsRun& run,
                             const costmodel::NcclModelCalibration* fitted = nullptr) {
  const costmodel::ClusterSpec cluster = costmodel::resolve_cluster(c.cluster, c.nodes);
  const costmodel::NcclTuning t = costmodel::nccl_tuning(
      cluster, {run.group.ranks, run.group.ranks_per_node,
                double(cluster.inter.nics_per_node) * run.group.ranks_per_node / cluster.gpus_per_node});
  return fitted ? costmodel::apply_nccl_calibration(t, *fitted) : t;
}

// Worst |error| over the log's out-of-place rows in [min_bytes, 8 GiB], priced by NCCL's model on
// the case's cluster, or with a fitted tier; prints the table.
double worst_error(const Case& c, const costmodel::NcclModelCalibration* fitted = nullptr) {
  const calib::NcclTestsRun run = load(c);
  const int ranks = run.group.ranks;
  const costmodel::NcclTuning t = tuning(c, run, fitted);
  double worst = 0;
  std::printf("%s (%d ranks, %s)\n", c.file, ranks, c.forced ? "forced algorithm" : "NCCL's choice");
  for (const calib::NcclTestsRow& row : run.rows) {
    if (row.size_bytes < c.min_bytes) continue;
    // NCCL_ALGO set: NCCL still chooses the protocol, by its tuner's time.
    const costmodel::NcclEstimate e = costmodel::nccl_choice(t, run.kind, row.size_bytes, {c.forced, std::nullopt});
    REQUIRE(e.time_s > 0);
    const double predicted = costmodel::busbw_GBps(run.kind, ranks, row.size_bytes, e.time_s);
    const double measured = row.out_of_place.busbw_GBps;
    const double err = predicted / measured - 1;
    worst = std::max(worst, std::abs(err));
    std::printf("  %12.0f  %8.2f GB/s predicted (%s/%s)  %8.2f measured  %+6.1f%%\n", row.size_bytes,
                predicted, std::string(costmodel::nccl_algo_name(e.algo)).c_str(),
                std::string(costmodel::nccl_proto_name(e.proto)).c_str(), measured, 100 * err);
  }
  return worst;
}

// Each log within its bound over its sizes.
void check_within(std::initializer_list<Case> cases) {
  for (const Case& c : cases) {
    CAPTURE(c.file);
    CHECK(worst_error(c) <= c.max_error);
  }
}

}  // namespace

// The bounds hold from the sizes given here. Most logs of the folder were run by nccl-tests in one
// process with one thread driving all 8 GPUs (`-g 8`, "nThread 1 nGpus 8" in the headers): each
// iteration the thread launches 8 kernels in a group, so a call cannot take less than that host
// time, 34-35 us in the H100 all-gather/reduce-scatter logs at 128 B to 64 KB and about 40 us up to
// 4 MB, where NCCL's kernels (the LL ring: 17 us for a 1 MB all-gather) take less. NCCL's tuner
// has no host term, and adding one would price every collective of a training step (one process
// per GPU) with a benchmark's artefact; so the bounds on those logs start where the kernel
// outlasts that floor: 2 MiB for the all-reduce (ring: worst -14.9% at 4 MiB, LL128's 14 us base
// latency; NVLS: -7.7% at 2 MiB), 4 MiB for all-gather and reduce-scatter (+12.3% and +13.2% at
// 4 MiB, LL). The one-process-per-GPU log (`-g 1`, NVIDIA's dgxc-benchmarking reference run) has
// no such floor and holds from 1 MiB: ring/LL -2.3% at 1 MiB, NVLS -10.7% at 2 MiB to +6.3% at
// 16 MiB. NVLS's mid sizes need the chunk rounds of nccl_model.cpp item 5: with NCCL's tuner time
// alone they were +20% to +49% fast from 2 to 64 MiB.
TEST_CASE("NCCL's model follows nccl-tests on one DGX H100") {
  constexpr double MiB = 1 << 20;
  check_within({
      {"h100_1node_allreduce_ring.log", CollectiveKind::all_reduce, "dgx-h100", 1, NcclAlgo::ring, 2 * MiB, 0.15},
      {"h100_1node_allgather_ring.log", CollectiveKind::all_gather, "dgx-h100", 1, NcclAlgo::ring, 4 * MiB, 0.15},
      {"h100_1node_reducescatter_ring.log", CollectiveKind::reduce_scatter, "dgx-h100", 1, NcclAlgo::ring, 4 * MiB, 0.15},
      {"h100_1node_allreduce_default_nvls.log", CollectiveKind::all_reduce, "dgx-h100", 1, std::nullopt, 2 * MiB, 0.15},
      {"h100_1node_allreduce_default_np8.log", CollectiveKind::all_reduce, "dgx-h100", 1, std::nullopt, 1 * MiB, 0.15},
  });
}

// The one-process-per-GPU A100 logs (8x A100-SXM4-80GB HGX, NCCL's choice; LamForest/
// cpp-cuda-py-torch-mlir, see its header; and Azure NDv4, 8x A100-SXM4-40GB, a table pasted
// without its rank lines, read with the rank count its job script gives) hold within 15% from
// 64 MiB only: the model's ring is within 6% at 1 MiB (LL), but +22% to +27% fast from 8 to
// 16 MiB (LL128) and +18% to +26% at 32 MiB (Simple), +12% to +14% at 128 MiB. Every public
// A100 log found shows the same, one node or two (below):
// NCCL's tuner is optimistic for A100 rings at mid sizes, with no constant of NCCL's to explain
// it (P2P read, on only for sm_80, moves only the Simple buffer: transport/p2p.cc), and issue
// 10's A100 bound from 1 MiB stays open. The -g 8 DGX A100 log is kept but not asserted (79 us
// at 1 MB, 17% under ring bandwidth up to 512 MB).
TEST_CASE("NCCL's model follows one-process-per-GPU nccl-tests logs on 8 A100") {
  constexpr double MiB = 1 << 20;
  check_within({
      {"a100_1node_allreduce_default_np8.log", CollectiveKind::all_reduce, "dgx-a100", 1, std::nullopt, 64 * MiB, 0.15},
      {"headerless/a100_ndv4_1node_allreduce_default_np8.log", CollectiveKind::all_reduce, "dgx-a100", 1,
       std::nullopt, 64 * MiB, 0.15, costmodel::CommGroup{8, 8}},
  });
}

// Two A100 nodes over InfiniBand (Azure NDv4 and NDmv4: 8 A100 and 8 HDR 200 Gb/s NICs each, as
// a DGX A100; 16 MPI processes, one per GPU; tables without rank lines). The two clusters agree
// within 2% at every size from 1 MiB, and the model holds within 15% from 64 MiB (+9.6%, then
// within 6% from 128 MiB); from 1 to 32 MiB it is +21% to +39% fast (tree/LL128, then ring/LL128):
// A100's LL128 is slower than NCCL's tuner says across nodes too.
TEST_CASE("NCCL's model follows nccl-tests on two A100 nodes over InfiniBand") {
  constexpr double MiB = 1 << 20;
  check_within({
      {"headerless/a100_ndv4_2node_ib_allreduce_default_np16.log", CollectiveKind::all_reduce, "dgx-a100", 2,
       std::nullopt, 64 * MiB, 0.15, costmodel::CommGroup{16, 8}},
      {"headerless/a100_ndmv4_2node_ib_allreduce_default_np16.log", CollectiveKind::all_reduce, "dgx-a100", 2,
       std::nullopt, 64 * MiB, 0.15, costmodel::CommGroup{16, 8}},
  });
}

// Two HGX H100 nodes (8 GPUs and 8 ConnectX-7 NDR 400 Gb/s InfiniBand NICs each, as a DGX H100),
// one process per GPU, NCCL 2.26.2 choosing (tree/LL128 to 2 MiB, then NVLS-Tree). With the chunk
// rounds of nccl_model.cpp item 5 the first log holds within 15% from 2 MiB (+5.4% there, -11.7%
// at 4 MiB, +14.4% at 64 MiB; before them, from 256 MiB only: +31% to +37% from 8 to 64 MiB); at
// 1 MiB the tree is +19.1% fast. A second pair of nodes of the same kind (nccl-tests#309, another
// reporter) is 30% slower than the first at 1 MiB (93.3 vs 71.9 us) and 15% slower at 4 MiB, so
// no one model holds both there: it holds within 15% from 128 MiB (+15.2% at 16 MiB, +17.1% at
// 64 MiB, +54% at 1 MiB). Issue 10's multi-node bound from 1 MiB is therefore not met yet.
TEST_CASE("NCCL's model follows nccl-tests on two H100 nodes over InfiniBand") {
  constexpr double MiB = 1 << 20;
  check_within({
      {"h100_2node_ib_hgx_allreduce.log", CollectiveKind::all_reduce, "dgx-h100", 2, std::nullopt, 2 * MiB, 0.15},
      {"h100_2node_ib_allreduce_default_np16.log", CollectiveKind::all_reduce, "dgx-h100", 2, std::nullopt, 128 * MiB,
       0.15},
  });
}


// NCCL's model fitted per protocol (`autoddl fit --cluster ... --nccl-per-protocol`) to a log's
// rows from the case's min_bytes.
costmodel::NcclModelCalibration fit_per_protocol(const Case& c) {
  const calib::NcclTestsRun run = load(c);
  calib::ShapePoints shape{run.kind, run.group, 1, {}, {}};
  for (const calib::NcclTestsRow& row : run.rows) {
    if (row.size_bytes >= c.min_bytes) shape.points.push_back({row.size_bytes, row.out_of_place.time_us * 1e-6});
  }
  const auto tiers = calib::fit_nccl_model(costmodel::resolve_cluster(c.cluster, c.nodes), {shape}, {}, true);
  REQUIRE(tiers.size() == 1);
  return tiers[0].tier;
}

// What a user's own nccl-tests log buys on A100: NCCL's model fitted per protocol (`autoddl fit
// --cluster dgx-a100 --nccl-per-protocol`) to the Azure NDv4 node's log, then used for the other
// A100 node (the HGX board of another owner): within 15% from 1 MiB, where the uncalibrated
// model is 22-27% fast (worst -11.9%, at 2 MiB, where the two nodes differ by 14%). LL128 comes
// out at 0.74 of NCCL's tuner bandwidth, Simple at 0.96 with 40 us more latency, LL at 0.93.
TEST_CASE("NCCL's model fitted per protocol on one A100 node follows another from 1 MiB") {
  constexpr double MiB = 1 << 20;
  const costmodel::NcclModelCalibration fit =
      fit_per_protocol({"headerless/a100_ndv4_1node_allreduce_default_np8.log", CollectiveKind::all_reduce,
                        "dgx-a100", 1, std::nullopt, 1 * MiB, 0.15, costmodel::CommGroup{8, 8}});
  CHECK(fit.protocols[size_t(costmodel::NcclProto::ll128)].fitted);
  CHECK(fit.protocols[size_t(costmodel::NcclProto::ll128)].bw_efficiency < 0.8);
  CHECK(fit.protocols[size_t(costmodel::NcclProto::simple)].fitted);
  const Case to{"a100_1node_allreduce_default_np8.log", CollectiveKind::all_reduce, "dgx-a100", 1, std::nullopt,
                1 * MiB, 0.15};
  CHECK(worst_error(to) > 0.2);  // NCCL's tuner alone
  CHECK(worst_error(to, &fit) <= to.max_error);
}

// The same across two A100 nodes over InfiniBand: fitted on the NDv4 pair, the NDmv4 pair (another
// Azure cluster, A100-80GB) within 4.7% from 1 MiB, where NCCL's tuner alone is 21-39% fast (the
// two pairs agree within 2%: what a calibration carries to another cluster of the same kind).
TEST_CASE("NCCL's model fitted per protocol on two A100 nodes follows another pair from 1 MiB") {
  constexpr double MiB = 1 << 20;
  const costmodel::NcclModelCalibration fit =
      fit_per_protocol({"headerless/a100_ndv4_2node_ib_allreduce_default_np16.log", CollectiveKind::all_reduce,
                        "dgx-a100", 2, std::nullopt, 1 * MiB, 0.15, costmodel::CommGroup{16, 8}});
  const Case to{"headerless/a100_ndmv4_2node_ib_allreduce_default_np16.log", CollectiveKind::all_reduce, "dgx-a100",
                2, std::nullopt, 1 * MiB, 0.15, costmodel::CommGroup{16, 8}};
  CHECK(worst_error(to) > 0.2);
  CHECK(worst_error(to, &fit) <= to.max_error);
}
