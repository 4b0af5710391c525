// The cost model and its presets against what one NVIDIA H200 measured (calib/data/h200, made
// by scripts/gpu-session; README.md there): validate_runner's single-GPU iterations, the
// cuBLAS GEMM and cuDNN attention throughput the presets cite from the literature, and what
// `autoddl fit` makes of the measurement files. The data are fixed files, so these tests fail
// when the model or a preset moves away from the measured GPU, not when the GPU does.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "autoddl/calib/fit.hpp"
#include "autoddl/calib/validation_compare.hpp"
#include "autoddl/calib/validation_format.hpp"
#include "autoddl/calib/validation_plan.hpp"
#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/compute.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/zoo.hpp"

using namespace autoddl;
using namespace autoddl::calib;
using namespace autoddl::costmodel;

namespace {

const std::string kData = std::string(AUTODDL_SOURCE_DIR) + "/calib/data/h200/";
const std::string kDataH100 = std::string(AUTODDL_SOURCE_DIR) + "/calib/data/h100/";

nlohmann::json read(const std::string& file, const std::string& dir = kData) {
  std::ifstream in(dir + file);
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

// The iteration and GEMM-step comparison of one committed runner result, the plan rebuilt with
// the flags scripts/h200-validation wrote it with.
struct Run {
  const char* name;
  const char* model;
  std::map<std::string, std::string> knobs;
};

Comparison compare(const Run& run, const std::string& cluster, const std::string& dir = kData) {
  ClusterSpec c = resolve_cluster(cluster, 1);
  Graph g = build_zoo_model(run.model, run.knobs);
  PlanBuild b = make_validation_plan(g, c, make_scheme("dp", g, c, {1}));
  const std::string file = std::string("validate_") + run.name + ".json";
  return compare_validation(b.plan, result_from_json(read(file, dir), file), file);
}

// The iteration's relative error with the fused-attention ops taken out of both sides.
double error_without_attention(const Comparison& c) {
  double predicted_s = c.iteration.predicted_s, measured_s = c.iteration.measured_s;
  for (const OpRow& op : c.ops) {
    if (op.kind != "attention") continue;
    predicted_s -= op.compute.predicted_s;
    measured_s -= op.compute.measured_s;
  }
  return predicted_s / measured_s - 1;
}

double kind_error_pct(const Comparison& c, const std::string& kind) {
  for (const ErrorRow& r : c.by_kind) {
    if (r.name == kind) return r.error_pct();
  }
  FAIL("no " << kind << " row");
  return 0;
}

}  // namespace

TEST_CASE("dgx-h200 / dgx-h100 predict the runner's transformer iterations on an H200 / H100 (less fused attention) within 12%, GEMMs within 5%",
          "[calib][h200]") {
  // Compute only (one GPU). The runner replays FlashAttention as a memory-bound kernel (no
  // FLOPs), so the fused attention op is taken out of both sides; the next tests hold its price
  // against cuDNN's.
  const std::vector<Run> runs = {
      {"gpt", "gpt", {}},
      {"llama", "llama", {{"size", "2-7b"}, {"layers", "4"}, {"batch", "2"}}},
      {"llama3_8b", "llama", {{"size", "3-8b"}, {"layers", "2"}, {"batch", "1"}}},
      {"gpt_1b_flash", "gpt",
       {{"layers", "4"}, {"hidden", "2048"}, {"heads", "16"}, {"seq", "2048"}, {"batch", "4"},
        {"dtype", "bf16"}, {"flash", "1"}}},
  };
  for (const Run& run : runs) {
    CAPTURE(run.name);
    Comparison h200 = compare(run, "dgx-h200");
    CHECK(h200.device == "NVIDIA H200");
    CHECK(std::abs(error_without_attention(h200)) <= 0.12);
    CHECK(std::abs(kind_error_pct(h200, "gemm")) <= 5);
    // The H100 preset prices the same compute with 3.35 instead of 4.8 TB/s of HBM: slower.
    Comparison h100 = compare(run, "dgx-h100");
    CHECK(h100.iteration.predicted_s > h200.iteration.predicted_s);
    CHECK(std::abs(h100.iteration.error_pct()) > std::abs(h200.iteration.error_pct()));
    // The same plans on an H100 (calib/data/h100), against dgx-h100.
    Comparison on_h100 = compare(run, "dgx-h100", kDataH100);
    CHECK(on_h100.device == "NVIDIA H100 80GB HBM3");
    CHECK(std::abs(error_without_attention(on_h100)) <= 0.12);
    CHECK(std::abs(kind_error_pct(on_h100, "gemm")) <= 5);
  }
}

TEST_CASE("the presets' cited GEMM efficiencies are within 15% of cuBLAS on an H200", "[calib][h200]") {
  // dgx-h100/h200 cite SemiAnalysis' H100 bf16 rate on Meta's Llama-70B training GEMMs and H200
  // cuBLASLt FP8 fractions; torch_gemm_crosscheck.json measured those shapes.
  const GpuSpec gpu = resolve_cluster("dgx-h200").gpu;
  int bf16 = 0, fp8 = 0;
  const nlohmann::json measured = read("torch_gemm_crosscheck.json");
  for (const auto& row : measured.at("rows")) {
    const std::string dtype = row.at("dtype");
    const double flops = 2.0 * row.at("m").get<double>() * row.at("n").get<double>() * row.at("k").get<double>();
    const double rate = row.at("tflops").get<double>() * 1e12;
    CAPTURE(dtype, row.at("m").get<int>(), row.at("n").get<int>(), row.at("k").get<int>());
    if (dtype == "bf16") {
      ++bf16;
      CHECK(interpolate_efficiency(gpu.matmul_efficiency, flops) == Approx(rate / gpu.peak_flops_bf16).epsilon(0.15));
    } else if (dtype == "fp8") {  // full-precision accumulation: TE's dgrad and wgrad
      ++fp8;
      CHECK(interpolate_efficiency(gpu.matmul_efficiency_fp8, flops) == Approx(rate / gpu.peak_flops_fp8).epsilon(0.15));
    }
  }
  CHECK(bf16 == 6);
  CHECK(fp8 == 6);
}

TEST_CASE("the presets' attention tables are within 10% of cuDNN attention on an H200", "[calib][h200]") {
  // The tables cite FlashAttention-3's cuDNN bars on an H100 (forward causal, backward without
  // mask); torch_attention_bench.json ran cuDNN's SDPA on the same grid.
  const GpuSpec gpu = resolve_cluster("dgx-h200").gpu;
  int fwd = 0, bwd = 0;
  const nlohmann::json measured = read("torch_attention_bench.json");
  for (const auto& row : measured.at("rows")) {
    if (row.at("backend") != "cudnn" || row.at("case") != "fa3-grid") continue;
    const double seq = row.at("seq").get<double>();
    CAPTURE(seq, row.at("causal").get<bool>());
    if (row.at("causal").get<bool>()) {
      ++fwd;
      CHECK(interpolate_efficiency(gpu.attention_efficiency_fwd, seq) ==
            Approx(row.at("fwd_efficiency").get<double>()).epsilon(0.10));
    } else {
      ++bwd;
      CHECK(interpolate_efficiency(gpu.attention_efficiency_bwd, seq) ==
            Approx(row.at("bwd_efficiency").get<double>()).epsilon(0.10));
    }
  }
  CHECK(fwd == 6);
  CHECK(bwd == 6);
}

TEST_CASE("fitting the H200 measurements keeps each dtype's table to its own kernels", "[calib][h200]") {
  std::vector<MeasurementFile> files;
  for (const char* f : {"gemm_cublaslt.json", "gemm_cublaslt_fp8_fast.json", "gemm_cublaslt_fp32.json",
                        "conv_cudnn.json", "conv_cudnn_fp32.json", "hbm_copy.json"}) {
    files.push_back(load_measurement_file(kData + f));
  }
  FitOptions opt;
  ClusterSpec h200 = resolve_cluster("dgx-h200");
  for (DType t : {DType::fp32, DType::bf16, DType::fp16, DType::fp8}) opt.peak_flops_per_s[t] = h200.gpu.peak_flops(t);
  opt.peak_source = "cluster dgx-h200";
  FitResult r = fit_calibration({}, files, opt);

  auto note_with = [&](const std::string& what) {
    for (const std::string& n : r.notes) {
      if (n.find(what) != std::string::npos) return true;
    }
    return false;
  };
  CHECK(note_with("343 fp8 GEMM rows with fast accumulation"));
  CHECK(note_with("conv fp32: "));  // FFT / Winograd shapes above the FMA peak, capped
  const EfficiencyCalibration* fp8 = r.calibration.find_efficiency("matmul", DType::fp8);
  REQUIRE(fp8 != nullptr);
  CHECK(fp8->peak_flops_per_s == 1.979e15);  // the cluster's, not the best kernel's
  CHECK(r.calibration.memory.hbm_bytes_per_s == Approx(3.95e12).epsilon(0.05));

  // Attached to the preset, each dtype's GEMM is priced from its own table: within 15% of the
  // measured kernel at 4096^3 (FP32 on the FMA units, bf16 and FP8 on the tensor cores).
  ClusterSpec cal = h200;
  cal.calibration_file = "/tmp/autoddl_h200_calibration_test_" + std::to_string(::getpid()) + ".json";
  save_calibration_file(cal.calibration_file, r.calibration);
  attach_calibration(cal, "/");
  std::remove(cal.calibration_file.c_str());
  const double flops = 2.0 * 4096.0 * 4096 * 4096;
  auto kernel_us = [&](const std::string& file, const std::string& dtype) {
    const nlohmann::json measured = read(file);
    for (const auto& row : measured.at("rows")) {
      const auto& s = row.at("shape");
      if (row.at("dtype") == dtype && s.at("m") == 4096 && s.at("n") == 4096 && s.at("k") == 4096) {
        return row.at("kernel_us").get<double>();
      }
    }
    FAIL("no 4096^3 " << dtype << " row in " << file);
    return 0.0;
  };
  const double bytes = 3.0 * 4096 * 4096;
  CHECK(kernel_time_s(cal.gpu, OpKind::matmul, DType::fp32, flops, 4 * bytes, 0) * 1e6 ==
        Approx(kernel_us("gemm_cublaslt_fp32.json", "fp32")).epsilon(0.15));
  CHECK(kernel_time_s(cal.gpu, OpKind::matmul, DType::bf16, flops, 2 * bytes, 0) * 1e6 ==
        Approx(kernel_us("gemm_cublaslt.json", "bf16")).epsilon(0.15));
  CHECK(kernel_time_s(cal.gpu, OpKind::matmul, DType::fp8, flops, bytes, 0) * 1e6 ==
        Approx(kernel_us("gemm_cublaslt.json", "fp8")).epsilon(0.15));
  // Where the two part: a 512^3 GEMM reaches about a third of the FMA peak but under a tenth of
  // the tensor cores' (the shared table priced FP32 GEMMs from the latter before).
  const double small = 2.0 * 512 * 512 * 512;
  CHECK(interpolate_efficiency(cal.gpu.matmul_efficiency_fp32, small) >
        3 * interpolate_efficiency(cal.gpu.matmul_efficiency, small));
}

TEST_CASE("the llama plan's fused attention is priced within 15% of cuDNN's on an H200", "[calib][h200]") {
  // The runner has no fused-attention kernel (it replays the op as a memory-bound kernel), so the
  // attention of the llama validation run (Llama-2 7B: batch 2, 32 heads, seq 4096, causal) was
  // timed through PyTorch's cuDNN SDPA instead (torch_attention_bench.json, case "llama-2-7b plan").
  const nlohmann::json measured = read("torch_attention_bench.json");
  const nlohmann::json* row = nullptr;
  for (const auto& r : measured.at("rows")) {
    if (r.at("backend") == "cudnn" && r.at("case") == "llama-2-7b plan") row = &r;
  }
  REQUIRE(row != nullptr);
  const GpuSpec gpu = resolve_cluster("dgx-h200").gpu;
  Graph g = build_zoo_model("llama", {{"size", "2-7b"}, {"layers", "4"}, {"batch", "2"}});
  const Op* core = nullptr;
  for (const Op& op : g.ops) {
    if (op.name == "layer.0.attn.core") core = &op;
  }
  REQUIRE(core != nullptr);
  CHECK(core->work.fwd_flops == Approx(row->at("fwd_flops").get<double>()));  // the same count
  const OpTimes t = op_kernel_times(gpu, g, *core, 1.0);
  CHECK(t.fwd_s * 1e3 == Approx(row->at("fwd_ms").get<double>()).epsilon(0.15));
  CHECK(t.bwd_s * 1e3 == Approx(row->at("bwd_ms").get<double>()).epsilon(0.15));
}

TEST_CASE("dgx-h100 prices the published H100 rows' layer GEMMs within 5% of cuBLAS on an H200 and an H100", "[calib][h200]") {
  // published_gemm_shapes.json (scripts/published-gemm-shapes): every GEMM of one layer and the LM
  // head, forward, dgrad and wgrad, on one GPU of each NeMo / DGX Cloud row; torch_plan_gemms.json
  // timed them (FP8 forward with fast accumulation, dgrad and wgrad without, as Transformer Engine
  // runs them). The presets' tables are FLOPs-indexed and cite other shapes; these are the rows'.
  // Kernel rates only: no launch overhead on either side.
  const nlohmann::json shapes = read("published_gemm_shapes.json");
  const GpuSpec gpu = resolve_cluster("dgx-h100").gpu;
  int rows = 0;
  for (const std::string& dir : {kData, kDataH100}) {
    CAPTURE(dir);
    const nlohmann::json measured = read("torch_plan_gemms.json", dir);
    for (const auto& row : shapes.at("rows")) {
      CAPTURE(row.at("name").get<std::string>());
      double predicted_s = 0, measured_s = 0;
      for (const auto& g : row.at("gemms")) {
        const nlohmann::json* m = nullptr;
        for (const auto& r : measured.at("rows")) {
          if (r.at("m") == g.at("m") && r.at("n") == g.at("n") && r.at("k") == g.at("k") &&
              r.at("batch") == g.at("batch") && r.at("dtype") == g.at("dtype")) {
            m = &r;
          }
        }
        REQUIRE(m != nullptr);
        const bool fp8 = g.at("dtype") == "fp8";
        const double flops = m->at("flops").get<double>();
        predicted_s += kernel_time_s(gpu, OpKind::matmul, fp8 ? DType::fp8 : DType::bf16, flops, 0, 0);
        const bool fast = fp8 && g.at("what") == "fwd";
        measured_s += m->at(fast ? "fast_accum_ms" : "ms").get<double>() * 1e-3;
      }
      ++rows;
      CHECK(predicted_s == Approx(measured_s).epsilon(0.05));
    }
  }
  CHECK(rows == 20);
}

TEST_CASE("fused attention on the published rows' shapes is priced within 8% of cuDNN on an H200", "[calib][h200]") {
  // One micro-batch's attention on one GPU of each published H100 row (few heads per GPU, one or
  // a few sequences): the seq-keyed tables alone price these up to 34% fast; the occupancy of the
  // kernel's 128-row tiles (attention_reference_tiles, attention_tail_waves) and the causal
  // backward table carry it. Each case is the attention op of a one-layer GPT with that shape.
  const nlohmann::json measured = read("torch_attention_bench.json");
  const GpuSpec gpu = resolve_cluster("dgx-h100").gpu;
  int cases = 0;
  for (const auto& r : measured.at("rows")) {
    const std::string name = r.at("case");
    if (r.at("backend") != "cudnn" || !name.starts_with("published")) continue;
    CAPTURE(name);
    const int b = r.at("b"), h = r.at("h"), s = r.at("seq");
    Graph g = build_zoo_model("gpt", {{"layers", "1"}, {"hidden", std::to_string(128 * h)}, {"heads", std::to_string(h)},
                                      {"seq", std::to_string(s)}, {"batch", std::to_string(b)}, {"vocab", "1024"},
                                      {"dtype", "bf16"}, {"flash", "1"}});
    const Op* core = nullptr;
    for (const Op& op : g.ops) {
      if (op.kind == OpKind::attention) core = &op;
    }
    REQUIRE(core != nullptr);
    const OpTimes t = op_kernel_times(gpu, g, *core, 1.0);
    // The kernels alone: one launch forward, two backward (op_kernel_times charges them).
    CHECK(t.fwd_s - gpu.launch_overhead_s == Approx(r.at("fwd_ms").get<double>() * 1e-3).epsilon(0.08));
    CHECK(t.bwd_s - 2 * gpu.launch_overhead_s == Approx(r.at("bwd_ms").get<double>() * 1e-3).epsilon(0.08));
    ++cases;
  }
  CHECK(cases == 7);
}

namespace {
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
}  // namespace

TEST_CASE("the presets' norm loss and optimizer rates are the medians of the H200 kernel measurements", "[calib][h200]") {
  // torch_nongemm_bench.json: CUPTI kernel time of each kernel on the tensors one GPU handles per
  // micro-batch in the published H100 rows; a rate is the least bytes / that time, as a
  // fraction of dgx-h200's streaming rate (hbm_bytes_per_s x hbm_efficiency). The presets carry
  // the median over the rows (dgx-h100 the same fractions: no H100 measurement).
  const nlohmann::json measured = read("torch_nongemm_bench.json");
  const GpuSpec h200 = resolve_cluster("dgx-h200").gpu;
  const double streaming = h200.hbm_bytes_per_s * h200.hbm_efficiency;
  REQUIRE(measured.at("hbm_bytes_per_s").get<double>() == Approx(h200.hbm_bytes_per_s));
  std::map<std::string, std::vector<double>> rates;
  for (const auto& r : measured.at("rows")) {
    if (r.contains("error")) continue;
    const std::string kernel = r.at("kernel"), variant = r.at("variant");
    if (kernel == "adamw_step") {
      rates["optimizer"].push_back(r.at("fwd_bytes").get<double>() / (r.at("fwd_ms").get<double>() * 1e-3) / streaming);
      continue;
    }
    const bool norm = (kernel == "layer_norm" || kernel == "rms_norm") && variant == "fused";
    if (!norm && kernel != "cross_entropy" && kernel != "residual_add") continue;
    const std::string cls = norm ? "norm" : kernel == "cross_entropy" ? "loss" : "residual";
    rates[cls + "_fwd"].push_back(r.at("fwd_bytes").get<double>() / (r.at("fwd_kernel_ms").get<double>() * 1e-3) / streaming);
    rates[cls + "_bwd"].push_back(r.at("bwd_bytes").get<double>() / (r.at("bwd_kernel_ms").get<double>() * 1e-3) / streaming);
  }
  REQUIRE(rates["norm_fwd"].size() == 7);
  REQUIRE(rates["loss_bwd"].size() == 7);
  REQUIRE(rates["optimizer"].size() == 3);
  // A plain elementwise kernel streams: the residual add moves its bytes at 0.9-1.05 of the rate.
  for (double r : rates["residual_fwd"]) CHECK((r > 0.9 && r < 1.05));
  for (const char* preset : {"dgx-h200", "dgx-h100"}) {
    CAPTURE(preset);
    const GpuSpec gpu = resolve_cluster(preset).gpu;
    CHECK(gpu.norm_fwd_rate == Approx(median(rates["norm_fwd"])).margin(0.001));
    CHECK(gpu.norm_bwd_rate == Approx(median(rates["norm_bwd"])).margin(0.001));
    CHECK(gpu.loss_fwd_rate == Approx(median(rates["loss_fwd"])).margin(0.001));
    CHECK(gpu.loss_bwd_rate == Approx(median(rates["loss_bwd"])).margin(0.001));
    CHECK(gpu.optimizer_rate == Approx(median(rates["optimizer"])).margin(0.001));
  }
}
