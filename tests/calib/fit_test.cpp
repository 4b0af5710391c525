// `autoddl fit` end to end without the CLI: sample nccl-tests logs and measurement rows in, a
// Calibration whose lookups reproduce the measurements out.
#include <algorithm>
#include <cmath>

#include <catch2/catch.hpp>

#include "autoddl/calib/fit.hpp"
#include "autoddl/costmodel/error.hpp"

using namespace autoddl::calib;
using autoddl::InputError;
using autoddl::costmodel::CalibrationMatch;
using autoddl::costmodel::CollectiveKind;
using autoddl::costmodel::DType;

namespace {

std::vector<NcclTestsRun> sample_logs() {
  std::vector<NcclTestsRun> runs;
  for (const char* f : {"all_reduce_perf_8xH100.txt", "all_gather_perf_2x8_mpi.txt",
                        "reduce_scatter_perf_4gpu.txt", "alltoall_perf_8gpu_nocheck.txt",
                        "sendrecv_perf_2gpu.txt"}) {
    auto r = load_nccl_tests_file(std::string(AUTODDL_SOURCE_DIR) + "/tests/calib/data/" + f);
    runs.insert(runs.end(), r.begin(), r.end());
  }
  return runs;
}

MeasurementRow kernel_row(const std::string& name, double flops, double bytes, double us) {
  MeasurementRow r;
  r.name = name;
  r.dtype = "bf16";
  r.flops = flops;
  r.size_bytes = bytes;
  r.time_us = us + 2;
  r.kernel_us = us;
  return r;
}

}  // namespace

TEST_CASE("fitting the sample logs gives one calibrated group per log", "[calib][fit]") {
  FitOptions opt;
  opt.date = "2025-01-01T00:00:00Z";
  FitResult r = fit_calibration(sample_logs(), {}, opt);
  const auto& cal = r.calibration;
  REQUIRE(cal.collectives.size() == 5);
  CHECK(cal.find(CollectiveKind::all_reduce, {8, 8}));
  CHECK(cal.find(CollectiveKind::all_gather, {16, 8}));
  CHECK(cal.find(CollectiveKind::reduce_scatter, {4, 4}));
  CHECK(cal.find(CollectiveKind::all_to_all, {8, 8}));
  CHECK(cal.find(CollectiveKind::send_recv, {2, 2}));
  CHECK(cal.provenance.device == "NVIDIA H100 80GB HBM3");
  CHECK(cal.provenance.inputs.size() == 5);
}

TEST_CASE("the fitted bands explain the sample logs within their noise", "[calib][fit]") {
  FitResult r = fit_calibration(sample_logs(), {}, FitOptions{});
  for (const CollectiveFitRow& c : r.collectives) {
    CAPTURE(std::string(autoddl::costmodel::collective_info(c.kind).name));
    REQUIRE(c.fit.holdout_rel_error);
    CHECK(*c.fit.holdout_rel_error < 0.05);
    for (const auto& band : c.fit.bands) {
      CHECK(band.fit->r2 > 0.95);  // flat latency bands explain less variance
      CHECK(band.fit->max_rel_error < 0.05);
    }
  }
  // The all_reduce sample has three α-β regimes (make_samples.py).
  auto ar = std::find_if(r.collectives.begin(), r.collectives.end(),
                         [](const CollectiveFitRow& c) { return c.kind == CollectiveKind::all_reduce; });
  CHECK(ar->fit.bands.size() == 3);
}

TEST_CASE("calibrated lookup returns the measured out-of-place time at a measured size",
          "[calib][fit]") {
  FitResult r = fit_calibration(sample_logs(), {}, FitOptions{});
  // all_reduce_perf_8xH100.txt: 1073741824 B took 5850.25 us out of place.
  CHECK(r.calibration.collective_time_s(CollectiveKind::all_reduce, {8, 8}, 1073741824.0) ==
        Approx(5850.25e-6));
  // 16 ranks, 8 per node: no all_reduce measured there; the all_gather log of that shape gave an
  // inter-node link tier, which prices it, unless link tiers are off.
  CalibrationMatch how = CalibrationMatch::none;
  CHECK(r.calibration.collective_time_s(CollectiveKind::all_reduce, {16, 8}, 1, 1e6, &how) > 0);
  CHECK(how == CalibrationMatch::link_tier);
  FitOptions no_tiers;
  no_tiers.link_tiers = false;
  FitResult plain = fit_calibration(sample_logs(), {}, no_tiers);
  CHECK(plain.calibration.link_tiers.empty());
  CHECK(plain.calibration.collective_time_s(CollectiveKind::all_reduce, {16, 8}, 1e6) < 0);
}

TEST_CASE("rows whose data check failed are left out and noted", "[calib][fit]") {
  FitResult r = fit_calibration(sample_logs(), {}, FitOptions{});
  const auto* rs = r.calibration.find(CollectiveKind::reduce_scatter, {4, 4});
  REQUIRE(rs);
  for (const auto& p : rs->measured) CHECK(p.bytes != 1 << 20);
  bool noted = std::any_of(r.notes.begin(), r.notes.end(), [](const std::string& n) {
    return n.find("reduce_scatter_perf_4gpu.txt: left out 1 rows") != std::string::npos;
  });
  CHECK(noted);
}

TEST_CASE("measurement rows give efficiency tables, HBM bandwidth and launch overhead",
          "[calib][fit]") {
  MeasurementFile m;
  m.path = "gpu.json";
  m.device = "NVIDIA H200";
  for (double d : {512.0, 1024.0, 2048.0, 4096.0, 8192.0}) {
    double flops = 2 * d * d * d;
    double eff = 0.8 / (1 + 1e10 / flops);
    m.rows.push_back(kernel_row("gemm", flops, 6 * d * d, flops / (989e12 * eff) * 1e6));
  }
  for (double b = 1 << 20; b <= (1 << 30); b *= 4) {
    MeasurementRow r;
    r.name = "copy";
    r.size_bytes = 2 * b;
    r.time_us = r.size_bytes / 4.2e12 * 1e6 + 3;
    m.rows.push_back(r);
  }
  for (double t : {2.4, 2.5, 2.6}) {
    MeasurementRow r;
    r.name = "launch";
    r.time_us = t;
    m.rows.push_back(r);
  }
  MeasurementRow skipped;
  skipped.name = "conv";
  skipped.skipped = "cuDNN has no algorithm for this shape";
  m.rows.push_back(skipped);

  FitOptions opt;
  opt.peak_flops_per_s[DType::bf16] = 989e12;
  FitResult r = fit_calibration({}, {m}, opt);
  const auto* e = r.calibration.find_efficiency("matmul", DType::bf16);
  REQUIRE(e);
  CHECK(e->peak_flops_per_s == 989e12);
  CHECK(e->shapes == 5);
  double flops = 2 * 4096.0 * 4096 * 4096;
  CHECK(r.calibration.kernel_efficiency("matmul", DType::bf16, flops) ==
        Approx(0.8 / (1 + 1e10 / flops)).epsilon(0.03));
  CHECK(r.calibration.memory.hbm_bytes_per_s == Approx(4.2e12).epsilon(1e-6));
  CHECK(r.calibration.memory.launch_overhead_s == Approx(2.5e-6));
  CHECK(r.calibration.provenance.device == "NVIDIA H200");
  CHECK(std::any_of(r.notes.begin(), r.notes.end(), [](const std::string& n) {
    return n == "gpu.json: 1 rows were skipped by the benchmark";
  }));
}

TEST_CASE("a kernel faster than the stated peak is an input error", "[calib][fit]") {
  MeasurementFile m;
  m.path = "gpu.json";
  m.rows.push_back(kernel_row("gemm", 2e12, 1e8, 1000));  // 2 PFLOP/s
  FitOptions opt;
  opt.peak_flops_per_s[DType::bf16] = 989e12;
  try {
    fit_calibration({}, {m}, opt);
    FAIL("expected InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) == "--peak: bf16: a measured kernel reaches 2000.0 TFLOP/s, above the peak 989.0");
  }
}

TEST_CASE("without a peak, efficiencies are relative to the best kernel and say so",
          "[calib][fit]") {
  MeasurementFile m;
  m.path = "gpu.json";
  m.rows.push_back(kernel_row("gemm", 1e9, 1e6, 10));
  m.rows.push_back(kernel_row("gemm", 1e12, 1e8, 2000));
  FitResult r = fit_calibration({}, {m}, FitOptions{});
  const auto* e = r.calibration.find_efficiency("matmul", DType::bf16);
  REQUIRE(e);
  CHECK(e->peak_source == "best measured");
  CHECK(e->peak_flops_per_s == Approx(5e14));
}

TEST_CASE("a log of CPU times is refused", "[calib][fit]") {
  auto runs = sample_logs();
  runs[0].cpu_time = true;
  CHECK_THROWS_AS(fit_calibration(runs, {}, FitOptions{}), InputError);
}

TEST_CASE("nothing to fit is an input error", "[calib][fit]") {
  CHECK_THROWS_AS(fit_calibration({}, {}, FitOptions{}), InputError);
}

TEST_CASE("the fit report has a units row and one row per band", "[calib][fit]") {
  FitResult r = fit_calibration(sample_logs(), {}, FitOptions{});
  std::string text = format_fit_report(r);
  CHECK(text.find("collective") == 0);
  CHECK(text.find("(us)") != std::string::npos);
  size_t rows = 0;
  for (const auto& c : r.collectives) rows += c.fit.bands.size();
  CHECK(static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) >= rows + 2);
}

TEST_CASE("HBM bandwidth is fitted on copies above the L2 cut-off, not on buffers that stay in L2",
          "[calib][fit]") {
  // Small buffers reused by the benchmark stay in L2 and run at several times the HBM rate.
  MeasurementFile m;
  m.path = "hbm.json";
  m.device = "NVIDIA H100";
  for (double moved = 1 << 20; moved <= 4.0 * (1 << 30); moved *= 2) {
    MeasurementRow r;
    r.name = "copy";
    r.size_bytes = moved;
    const double bw = moved < 100e6 ? 12e12 : 3.0e12;  // L2 under ~50 MB buffers, HBM above
    r.time_us = moved / bw * 1e6 + 3;
    m.rows.push_back(r);
  }
  FitOptions opt;
  const FitResult r = fit_calibration({}, {m}, opt);
  CHECK(r.calibration.memory.hbm_bytes_per_s == Approx(3.0e12).epsilon(1e-6));
  CHECK(std::any_of(r.notes.begin(), r.notes.end(),
                    [](const std::string& n) { return n.find("left out of the bandwidth fit") != std::string::npos; }));
  opt.hbm_min_bytes = 0;  // every size: the L2 points pull the fitted bandwidth up
  CHECK(fit_calibration({}, {m}, opt).calibration.memory.hbm_bytes_per_s > 1.05 * 3.0e12);
}

TEST_CASE("fp32 convs run with TF32 allowed are left out of the FP32 efficiency fit, with a note",
          "[calib][fit]") {
  MeasurementFile m;
  m.path = "conv_cudnn.json";
  m.device = "NVIDIA H100 80GB HBM3";
  for (double k : {64.0, 128.0, 256.0, 512.0}) {
    const double flops = 2 * 32 * k * 56 * 56 * k * 9;
    MeasurementRow tf32 = kernel_row("conv", flops, 1e8, flops / 300e12 * 1e6);  // TF32 speed
    tf32.dtype = "fp32";
    tf32.shape = {{"layer", "res"}, {"tf32", "allowed"}, {"math", "default"}};
    m.rows.push_back(tf32);
    MeasurementRow fma = kernel_row("conv", flops, 1e8, flops / 40e12 * 1e6);  // --no-tf32
    fma.dtype = "fp32";
    fma.shape = {{"layer", "res"}, {"tf32", "off"}, {"math", "fma"}};
    m.rows.push_back(fma);
  }
  FitOptions opt;
  opt.peak_flops_per_s[DType::fp32] = 67e12;  // TF32 rows would read 4.5x above it
  FitResult r = fit_calibration({}, {m}, opt);
  const auto* e = r.calibration.find_efficiency("conv", DType::fp32);
  REQUIRE(e);
  CHECK(e->shapes == 4);  // the --no-tf32 rows only
  CHECK(std::any_of(r.notes.begin(), r.notes.end(), [](const std::string& n) {
    return n.find("conv_cudnn.json: left out 4 fp32 conv rows run with TF32 allowed") != std::string::npos;
  }));
}

TEST_CASE("block-scaled GEMM rows (mxfp8, nvfp4) are kept out of the fit with a note, not refused",
          "[calib][fit]") {
  MeasurementFile m;
  m.path = "gemm_cublaslt.json";
  m.device = "NVIDIA B200";
  for (double n : {1024.0, 2048.0, 4096.0}) {
    const double flops = 2 * n * n * n;
    MeasurementRow bf16 = kernel_row("gemm", flops, 6 * n * n, flops / 1500e12 * 1e6);
    bf16.dtype = "bf16";
    m.rows.push_back(bf16);
    for (const char* dtype : {"mxfp8", "nvfp4"}) {
      MeasurementRow lp = kernel_row("gemm", flops, 3 * n * n, flops / 3000e12 * 1e6);
      lp.dtype = dtype;
      lp.shape = {{"layout", "TN"}, {"output", "bf16"}, {"scale_block", dtype == std::string("mxfp8") ? "32" : "16"}};
      m.rows.push_back(lp);
    }
  }
  FitOptions opt;
  opt.peak_flops_per_s[DType::bf16] = 2250e12;
  const FitResult r = fit_calibration({}, {m}, opt);
  const auto* e = r.calibration.find_efficiency("matmul", DType::bf16);
  REQUIRE(e);
  CHECK(e->shapes == 3);  // the bf16 rows only
  CHECK(std::any_of(r.notes.begin(), r.notes.end(), [](const std::string& n) {
    return n.find("gemm_cublaslt.json: left out 6 block-scaled GEMM rows (mxfp8, nvfp4)") != std::string::npos;
  }));
}
