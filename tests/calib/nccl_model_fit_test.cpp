// NCCL's model fitted to measured sizes (issue 16, "fit the link tiers ... and the NCCL-model
// parameters"): synthetic points made by NCCL's model with known per-tier bandwidth efficiency
// and latency offset are fitted back; logged algorithm/protocol attribute sizes; the calibration
// JSON keeps the tiers; a mesh dim never measured is priced by NCCL's model with its tier, while a
// measured entry still wins.
#include <cmath>
#include <memory>

#include <catch2/catch.hpp>

#include "autoddl/calib/nccl_model_fit.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/mesh.hpp"

using namespace autoddl::calib;
using namespace autoddl::costmodel;

namespace {

ClusterSpec h100(int nodes) { return resolve_cluster("dgx-h100", nodes); }

NcclModelCalibration params(double efficiency, double offset_s) {
  NcclModelCalibration t;
  t.bw_efficiency = efficiency;
  t.latency_offset_s = offset_s;
  return t;
}

// Points of NCCL's model with `truth` applied, 8 B .. 1 GiB; with `forced`, every size is run
// (and logged) with that algorithm/protocol, as with NCCL_ALGO/NCCL_PROTO set.
ShapePoints shape(const ClusterSpec& c, CollectiveKind kind, CommGroup g, int groups, const NcclModelCalibration& truth,
                  bool log_choices, const NcclChoice* forced = nullptr) {
  ShapePoints s{kind, g, groups, {}, {}};
  const NcclTuning t = apply_nccl_calibration(nccl_tuning(c, nccl_comm_for(c, g, groups)), truth);
  for (double b = 8; b <= (1 << 30); b *= 4) {
    NcclEstimate e = nccl_time(t, kind, b);
    if (forced) {
      for (int a = 0; a < kNcclAlgoCount; ++a) {
        for (int p = 0; p < kNcclProtoCount; ++p) {
          if (nccl_algo_name(NcclAlgo(a)) == forced->algo && nccl_proto_name(NcclProto(p)) == forced->proto) {
            e = nccl_time(t, kind, b, NcclAlgo(a), NcclProto(p));
          }
        }
      }
    }
    REQUIRE(e.time_s > 0);
    s.points.push_back({b, e.time_s});
    if (log_choices) {
      s.choices.push_back(NcclChoice{std::string(nccl_algo_name(e.algo)), std::string(nccl_proto_name(e.proto)), 0});
    }
  }
  return s;
}

std::vector<ShapePoints> cluster_shapes(const ClusterSpec& c, bool log_choices) {
  const NcclModelCalibration intra = params(0.8, 3e-6), shared = params(0.55, 9e-6), alone = params(0.9, 2e-6),
                             nodes = params(0.45, 12e-6);
  std::vector<ShapePoints> s;
  for (CollectiveKind k : {CollectiveKind::all_reduce, CollectiveKind::all_gather, CollectiveKind::reduce_scatter}) {
    for (int p : {2, 4, 8}) s.push_back(shape(c, k, {p, p}, 1, intra, log_choices));
    for (int n : {2, 4}) {
      s.push_back(shape(c, k, {n, 1}, 8, shared, log_choices));
      s.push_back(shape(c, k, {n, 1}, 1, alone, log_choices));
      s.push_back(shape(c, k, {8 * n, 8}, 1, nodes, log_choices));
    }
  }
  s.push_back(ShapePoints{CollectiveKind::all_reduce, {1, 1}, 1, {{8, 1e-6}}, {}});  // one rank: left out
  s.push_back(ShapePoints{CollectiveKind::all_to_all, {8, 8}, 1, {{8, 1e-5}}, {}});  // not NCCL's model: left out
  return s;
}

void check_recovered(const std::vector<NcclModelFitRow>& tiers) {
  REQUIRE(tiers.size() == 4);
  CHECK_FALSE(tiers[0].tier.inter_node);
  CHECK(tiers[0].tier.shapes == 9);
  CHECK(tiers[0].tier.bw_efficiency == Approx(0.8).epsilon(1e-4));
  CHECK(tiers[0].tier.latency_offset_s == Approx(3e-6).margin(1e-9));
  CHECK(tiers[1].tier.inter_node);
  CHECK((tiers[1].tier.ranks_per_node == 1 && tiers[1].tier.groups_per_node == 1));
  CHECK(tiers[1].tier.bw_efficiency == Approx(0.9).epsilon(1e-4));
  CHECK(tiers[1].tier.latency_offset_s == Approx(2e-6).margin(1e-9));
  CHECK((tiers[2].tier.ranks_per_node == 1 && tiers[2].tier.groups_per_node == 8));
  CHECK(tiers[2].tier.shapes == 6);  // 2 and 4 nodes x 1 rank per node x 8 groups
  CHECK(tiers[2].tier.bw_efficiency == Approx(0.55).epsilon(1e-4));
  CHECK(tiers[2].tier.latency_offset_s == Approx(9e-6).margin(1e-9));
  CHECK((tiers[3].tier.ranks_per_node == 8 && tiers[3].tier.groups_per_node == 1));  // whole nodes
  CHECK(tiers[3].tier.bw_efficiency == Approx(0.45).epsilon(1e-4));
  CHECK(tiers[3].tier.latency_offset_s == Approx(12e-6).margin(1e-9));
  for (const NcclModelFitRow& t : tiers) {
    CHECK(t.tier.mean_rel_error < 1e-4);
    REQUIRE(t.holdout.size() == static_cast<size_t>(t.tier.shapes));
    REQUIRE(t.tier.holdout_rel_error);
    CHECK(*t.tier.holdout_rel_error < 1e-3);
  }
}

}  // namespace

TEST_CASE("the NCCL-model fit recovers each tier's bandwidth efficiency and latency offset", "[calib][nccl_fit]") {
  const ClusterSpec c = h100(4);
  SECTION("from the times alone: NCCL's own choice, refitted until it settles") {
    const std::vector<NcclModelFitRow> tiers = fit_nccl_model(c, cluster_shapes(c, false));
    check_recovered(tiers);
    CHECK(tiers[0].tier.attributed_points == 0);
  }
  SECTION("with the algorithm and protocol NCCL logged for every size") {
    const std::vector<NcclModelFitRow> tiers = fit_nccl_model(c, cluster_shapes(c, true));
    check_recovered(tiers);
    CHECK(tiers[0].tier.attributed_points == tiers[0].tier.points);
    CHECK(tiers[0].unusable_choices == 0);
  }
}

TEST_CASE("logged algorithm/protocol attribute sizes the model would give to another algorithm", "[calib][nccl_fit]") {
  // Every size run with ring/Simple (NCCL_ALGO=Ring NCCL_PROTO=Simple): with the log, the fit
  // prices each size as ring/Simple and recovers the truth; without it, NCCL's own picks (LL and
  // LL128 for small sizes) do not explain the points.
  const ClusterSpec c = h100(1);
  const NcclModelCalibration truth = params(0.7, 4e-6);
  const NcclChoice ring_simple{"ring", "Simple", 0};
  std::vector<ShapePoints> logged, unlogged;
  for (int p : {2, 4, 8}) {
    logged.push_back(shape(c, CollectiveKind::all_gather, {p, p}, 1, truth, true, &ring_simple));
    logged.back().choices.assign(logged.back().points.size(), ring_simple);
    unlogged.push_back(shape(c, CollectiveKind::all_gather, {p, p}, 1, truth, false, &ring_simple));
  }
  const std::vector<NcclModelFitRow> with_log = fit_nccl_model(c, logged);
  REQUIRE(with_log.size() == 1);
  CHECK(with_log[0].tier.bw_efficiency == Approx(0.7).epsilon(1e-4));
  CHECK(with_log[0].tier.latency_offset_s == Approx(4e-6).margin(1e-9));
  CHECK(with_log[0].tier.mean_rel_error < 1e-4);
  const std::vector<NcclModelFitRow> without = fit_nccl_model(c, unlogged);
  CHECK(without[0].tier.mean_rel_error > 10 * with_log[0].tier.mean_rel_error);
}

TEST_CASE("a logged algorithm NCCL's model does not offer is priced by the model's pick and counted",
          "[calib][nccl_fit]") {
  const ClusterSpec c = h100(1);
  ShapePoints s = shape(c, CollectiveKind::all_reduce, {8, 8}, 1, params(1, 0), false);
  s.choices.assign(s.points.size(), NcclChoice{"collnet_direct", "Simple", 0});
  const std::vector<NcclModelFitRow> tiers = fit_nccl_model(c, {s});
  REQUIRE(tiers.size() == 1);
  CHECK(tiers[0].unusable_choices == static_cast<int>(s.points.size()));
  CHECK(tiers[0].tier.attributed_points == 0);
  CHECK(tiers[0].tier.bw_efficiency == Approx(1).epsilon(1e-4));
  ClusterSpec no_nccl = c;
  no_nccl.nccl.reset();
  CHECK_THROWS_AS(fit_nccl_model(no_nccl, {s}), autoddl::InputError);
}

TEST_CASE("fitted NCCL-model tiers price unmeasured mesh dims, measured entries still win", "[calib][nccl_fit]") {
  ClusterSpec c = h100(8);
  Calibration cal;
  NcclModelCalibration intra = params(0.8, 3e-6);
  intra.shapes = intra.points = 1;
  NcclModelCalibration inter = params(0.5, 10e-6);
  inter.inter_node = true;
  inter.ranks_per_node = 1;
  inter.groups_per_node = 8;
  inter.shapes = inter.points = 1;
  cal.nccl_model = {intra, inter};
  cal.nccl_basis = nccl_model_basis(c);
  CollectiveCalibration measured;  // the 8 GPUs of a node, measured
  measured.kind = CollectiveKind::all_reduce;
  measured.group = {8, 8};
  measured.measured = {{1024, 20e-6}, {double(1 << 30), 3e-3}};
  cal.collectives.push_back(measured);

  // The JSON keeps the tiers and the basis; the loader checks them.
  const Calibration back = calibration_from_json(calibration_to_json(cal), "c.json");
  REQUIRE(back.nccl_model.size() == 2);
  CHECK(back.nccl_model[1].groups_per_node == 8);
  CHECK(back.nccl_model[1].bw_efficiency == 0.5);
  CHECK(back.nccl_basis.cluster == "dgx-h100");
  nlohmann::json bad = calibration_to_json(cal);
  bad["nccl_model"]["tiers"][1]["bw_efficiency"] = 0;
  CHECK_THROWS_WITH(calibration_from_json(bad, "c.json"),
                    "c.json: nccl_model.tiers[1].bw_efficiency: out of range [0.001, 10]: 0");
  nlohmann::json old = calibration_to_json(cal);
  old.erase("nccl_model");
  CHECK(calibration_from_json(old, "c.json").nccl_model.empty());

  c.calibration = std::make_shared<const Calibration>(back);
  const DeviceMesh mesh = make_mesh(c, {8, 8});
  // dim 0: 8 nodes, 1 rank per node, 8 groups per node: never measured, NIC load 8.
  REQUIRE(mesh.dims[0].nccl_fitted);
  CHECK(mesh.calibration_match(0, CollectiveKind::all_reduce) == CalibrationMatch::nccl_model);
  const NcclTuning fitted = apply_nccl_calibration(nccl_tuning(c, nccl_comm_for(c, {8, 1}, 8)), inter);
  for (double bytes : {4096.0, 16.0 * (1 << 20), double(1 << 30)}) {
    const double want = nccl_time(fitted, CollectiveKind::all_reduce, bytes).time_s;
    CHECK(mesh.collective_time_s(0, CollectiveKind::all_reduce, bytes) == Approx(want).epsilon(1e-12));
    CHECK(want > nccl_time(*mesh.dims[0].nccl, CollectiveKind::all_reduce, bytes).time_s);  // η < 1, δ > 0
  }
  // dim 1: the node's 8 GPUs, measured: the measured table, not the fitted model.
  CHECK(mesh.calibration_match(1, CollectiveKind::all_reduce) == CalibrationMatch::measured);
  CHECK(mesh.collective_time_s(1, CollectiveKind::all_reduce, double(1 << 30)) == Approx(3e-3));
  // All-gather over the node was not measured: the intra-node tier prices it.
  CHECK(mesh.calibration_match(1, CollectiveKind::all_gather) == CalibrationMatch::nccl_model);
  const NcclTuning fitted_intra = apply_nccl_calibration(nccl_tuning(c, nccl_comm_for(c, {8, 8}, 1)), intra);
  CHECK(mesh.collective_time_s(1, CollectiveKind::all_gather, 1 << 20) ==
        Approx(nccl_time(fitted_intra, CollectiveKind::all_gather, 1 << 20).time_s).epsilon(1e-12));
}

// nccl-tests run with NCCL_ALGO=Ring and no NCCL_DEBUG lines: NCCL chose the protocol among the
// ring's. Fitted as run (NcclRestriction), the tier comes back exactly; fitted as if NCCL had
// chosen freely (NVLS from 2 MiB on one H100 node), it does not.
TEST_CASE("the NCCL-model fit prices unlogged sizes with the NCCL_ALGO the runs were made with", "[calib][nccl_fit]") {
  const ClusterSpec c = h100(1);
  const NcclModelCalibration truth = params(0.85, 4e-6);
  const CommGroup g{8, 8};
  const NcclTuning t = apply_nccl_calibration(nccl_tuning(c, nccl_comm_for(c, g, 1)), truth);
  std::vector<ShapePoints> shapes{ShapePoints{CollectiveKind::all_reduce, g, 1, {}, {}}};
  for (double b = 1 << 10; b <= (1 << 30); b *= 4) {
    const NcclEstimate e = nccl_choice(t, CollectiveKind::all_reduce, b, {NcclAlgo::ring, std::nullopt});
    REQUIRE(e.algo == NcclAlgo::ring);
    shapes[0].points.push_back({b, e.time_s});
  }
  const auto ring = fit_nccl_model(c, shapes, NcclRestriction{NcclAlgo::ring, std::nullopt});
  REQUIRE(ring.size() == 1);
  CHECK(ring[0].tier.bw_efficiency == Approx(0.85).epsilon(1e-4));
  CHECK(ring[0].tier.latency_offset_s == Approx(4e-6).margin(1e-9));
  CHECK(ring[0].tier.mean_rel_error < 1e-4);
  const auto free = fit_nccl_model(c, shapes);
  REQUIRE(free.size() == 1);
  CHECK(free[0].tier.mean_rel_error > 0.01);
  // Nothing of NCCL's model is allowed: NVLS on an A100 node.
  const ClusterSpec a100 = resolve_cluster("dgx-a100", 1);
  CHECK_THROWS_WITH(fit_nccl_model(a100, shapes, NcclRestriction{NcclAlgo::nvls, std::nullopt}),
                    "--nccl-algo: nvls: NCCL's model has no nvls all_reduce for 8 ranks, 8 per node, on dgx-a100");
}

// --nccl-per-protocol: sizes made by a model whose LL128 and Simple fall short of the tier's
// efficiency and offset by their own amounts (as on A100) are fitted back per protocol; the
// JSON keeps the protocols, and the loader checks them.
TEST_CASE("the NCCL-model fit recovers a protocol's own efficiency and offset", "[calib][nccl_fit]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 1);
  NcclModelCalibration truth = params(0.9, 1e-6);
  truth.protocols[size_t(NcclProto::ll128)] = {true, 0.7, -1e-6, 0};
  truth.protocols[size_t(NcclProto::simple)] = {true, 0.95, 40e-6, 0};
  const CommGroup g{8, 8};
  const NcclTuning t = apply_nccl_calibration(nccl_tuning(c, nccl_comm_for(c, g, 1)), truth);
  std::vector<ShapePoints> shapes{ShapePoints{CollectiveKind::all_reduce, g, 1, {}, {}}};
  int per_proto[kNcclProtoCount] = {};
  for (double b = 1 << 10; b <= 8.0 * (1 << 30); b *= 2) {
    const NcclEstimate e = nccl_time(t, CollectiveKind::all_reduce, b);
    ++per_proto[int(e.proto)];
    shapes[0].points.push_back({b, e.time_s});
  }
  REQUIRE(per_proto[int(NcclProto::ll128)] >= 2);
  REQUIRE(per_proto[int(NcclProto::simple)] >= 2);
  const auto fit = fit_nccl_model(c, shapes, {}, true);
  REQUIRE(fit.size() == 1);
  const NcclModelCalibration& f = fit[0].tier;
  CHECK(f.mean_rel_error < 1e-4);
  for (NcclProto p : {NcclProto::ll128, NcclProto::simple}) {
    CAPTURE(nccl_proto_name(p));
    const NcclModelCalibration::Protocol& got = f.protocols[size_t(p)];
    REQUIRE(got.fitted);
    CHECK(got.points == per_proto[int(p)]);
    CHECK(got.bw_efficiency == Approx(truth.protocols[size_t(p)].bw_efficiency).epsilon(1e-4));
    CHECK(got.latency_offset_s == Approx(truth.protocols[size_t(p)].latency_offset_s).margin(1e-9));
  }
  // One tier-wide (η, δ) cannot follow both.
  CHECK(fit_nccl_model(c, shapes)[0].tier.mean_rel_error > 0.02);

  Calibration cal;
  cal.nccl_model = {f};
  cal.nccl_basis = nccl_model_basis(c);
  const Calibration back = calibration_from_json(calibration_to_json(cal), "c.json");
  REQUIRE(back.nccl_model.size() == 1);
  for (int p = 0; p < kNcclProtoCount; ++p) {
    CHECK(back.nccl_model[0].protocols[size_t(p)].fitted == f.protocols[size_t(p)].fitted);
    CHECK(back.nccl_model[0].protocols[size_t(p)].bw_efficiency == f.protocols[size_t(p)].bw_efficiency);
  }
  nlohmann::json bad = calibration_to_json(cal);
  bad["nccl_model"]["tiers"][0]["protocols"][0]["protocol"] = "LL64";
  CHECK_THROWS_WITH(calibration_from_json(bad, "c.json"),
                    "c.json: nccl_model.tiers[0].protocols[0].protocol: expected \"LL\", \"LL128\" or \"Simple\"");
  bad = calibration_to_json(cal);
  bad["nccl_model"]["tiers"][0]["protocols"][1]["protocol"] = bad["nccl_model"]["tiers"][0]["protocols"][0]["protocol"];
  CHECK_THROWS_WITH(calibration_from_json(bad, "c.json"),
                    Catch::Contains("appears twice"));
}
