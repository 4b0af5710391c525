// Builds a Calibration from nccl-tests logs and microbenchmark results (see fit.hpp).
// Collective points are grouped by (kind, ranks, ranks per node); repeated sizes are merged by
// their median; rows whose data check failed (#wrong > 0) are left out and noted. Collective
// times are the out-of-place columns, as nccl-tests users read them.
#include "autoddl/calib/fit.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <set>
#include <tuple>

#include "autoddl/costmodel/error.hpp"

namespace autoddl::calib {

using costmodel::CollectiveKind;
using costmodel::DType;

namespace {

using GroupKey = std::tuple<CollectiveKind, int, int, int>;  // kind, ranks, per node, groups per node

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string now_utc() {
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

struct CollectivePoints {
  std::map<double, std::vector<double>> times_by_bytes;
  std::map<double, std::vector<NcclChoice>> choices_by_bytes;  // NCCL's logged choices
  std::set<std::string> sources;
};

// The choice logged most often for one size (ties: the first).
std::optional<NcclChoice> most_common(const std::vector<NcclChoice>& v) {
  std::optional<NcclChoice> best;
  size_t best_n = 0;
  for (const NcclChoice& c : v) {
    const size_t n = static_cast<size_t>(std::count(v.begin(), v.end(), c));
    if (n > best_n) best = c, best_n = n;
  }
  return best;
}

struct KernelPoints {
  std::vector<KernelSample> samples;
};

void add_nccl_tests(const std::vector<NcclTestsRun>& runs, std::map<GroupKey, CollectivePoints>& groups,
                    std::vector<std::string>& notes) {
  for (const NcclTestsRun& run : runs) {
    if (run.cpu_time) {
      throw InputError(run.file, "line " + std::to_string(run.first_line),
                       "the log reports CPU time (nccl-tests -C 1); rerun without -C to fit GPU time");
    }
    GroupKey key{run.kind, run.group.ranks, run.group.ranks_per_node, run.groups_per_node};
    CollectivePoints& g = groups[key];
    g.sources.insert(run.file);
    int wrong = 0;
    for (const NcclTestsRow& r : run.rows) {
      if (r.size_bytes <= 0 || r.out_of_place.time_us <= 0) continue;
      if (r.out_of_place.wrong && *r.out_of_place.wrong > 0) {
        ++wrong;
        continue;
      }
      g.times_by_bytes[r.size_bytes].push_back(r.out_of_place.time_us * 1e-6);
    }
    if (wrong > 0) {
      notes.push_back(run.file + ": left out " + std::to_string(wrong) +
                      " rows whose data check failed (#wrong > 0)");
    }
  }
}

void add_measurements(const std::vector<MeasurementFile>& files,
                      std::map<GroupKey, CollectivePoints>& groups,
                      std::map<std::pair<std::string, DType>, KernelPoints>& kernels,
                      std::map<std::string, std::vector<SizeTime>>& copies,
                      std::vector<double>& launches, std::vector<std::string>& notes) {
  for (const MeasurementFile& f : files) {
    int skipped = 0, wrong = 0, tf32 = 0, fast_accum = 0, block_scaled = 0;
    for (size_t i = 0; i < f.rows.size(); ++i) {
      const MeasurementRow& r = f.rows[i];
      if (!r.skipped.empty()) {
        ++skipped;
        continue;
      }
      double time_s = r.time_us * 1e-6;
      double kernel_s = r.kernel_us && *r.kernel_us > 0 ? *r.kernel_us * 1e-6 : time_s;
      if (const costmodel::CollectiveInfo* info = costmodel::find_collective(r.name)) {
        if (r.shape.value("placement", "out-of-place") != "out-of-place") continue;
        if (r.wrong && *r.wrong > 0) {
          ++wrong;
          continue;
        }
        if (r.size_bytes <= 0) continue;
        GroupKey key{info->kind, r.ranks, r.ranks_per_node, r.groups_per_node};
        groups[key].times_by_bytes[r.size_bytes].push_back(time_s);
        if (r.nccl) groups[key].choices_by_bytes[r.size_bytes].push_back(*r.nccl);
        groups[key].sources.insert(f.path);
      } else if (r.name == "gemm" && (r.dtype == "mxfp8" || r.dtype == "nvfp4")) {
        // Blackwell's block-scaled GEMMs (gemm_cublaslt on compute capability 10.0+): measured and
        // kept in the file, not yet a table of the cost model (issue 30 item 4).
        ++block_scaled;
      } else if (r.name == "gemm" || r.name == "conv") {
        DType dtype;
        if (!costmodel::parse_dtype(r.dtype, dtype)) {
          throw InputError(f.path, "rows[" + std::to_string(i) + "].dtype",
                           "unknown dtype '" + r.dtype + "'");
        }
        if (r.flops <= 0) {
          throw InputError(f.path, "rows[" + std::to_string(i) + "].flops", "must be positive");
        }
        // fp32 convs that cuDNN may run on TF32 tensor cores (conv_cudnn's default, as PyTorch's)
        // are not FP32-peak work: measured against that peak they would read above it.
        if (dtype == DType::fp32 && r.shape.value("tf32", "off") == "allowed") {
          ++tf32;
          continue;
        }
        // FP8 GEMMs with cuBLASLt's fast accumulation are Transformer Engine's forward GEMM only;
        // its dgrad and wgrad (two of every three) accumulate in full precision, so the one fp8
        // table the cost model has is fitted on those.
        if (dtype == DType::fp8 && r.shape.value("fast_accum", "off") == "on") {
          ++fast_accum;
          continue;
        }
        kernels[{r.name == "gemm" ? "matmul" : "conv", dtype}].samples.push_back(
            {r.flops, r.size_bytes, kernel_s});
      } else if (r.name == "copy" || r.name == "scale" || r.name == "triad" || r.name == "memcpy") {
        if (r.size_bytes > 0) copies[r.name].push_back({r.size_bytes, kernel_s});
      } else if (r.name == "launch") {
        launches.push_back(time_s);
      } else {
        notes.push_back(f.path + ": rows[" + std::to_string(i) + "]: unknown benchmark row '" +
                        r.name + "' left out");
      }
    }
    if (skipped > 0) {
      notes.push_back(f.path + ": " + std::to_string(skipped) + " rows were skipped by the benchmark");
    }
    if (tf32 > 0) {
      notes.push_back(f.path + ": left out " + std::to_string(tf32) +
                      " fp32 conv rows run with TF32 allowed (PyTorch's default; the fp32 efficiency is "
                      "relative to the FP32 peak): conv_cudnn --no-tf32 measures FP32 convs");
    }
    if (block_scaled > 0) {
      notes.push_back(f.path + ": left out " + std::to_string(block_scaled) +
                      " block-scaled GEMM rows (mxfp8, nvfp4): the cost model has no MXFP8 or NVFP4 GEMM table yet");
    }
    if (fast_accum > 0) {
      notes.push_back(f.path + ": left out " + std::to_string(fast_accum) +
                      " fp8 GEMM rows with fast accumulation (Transformer Engine's forward GEMM; the fp8 "
                      "table is fitted on full-precision accumulation, as its dgrad and wgrad run)");
    }
    if (wrong > 0) {
      notes.push_back(f.path + ": left out " + std::to_string(wrong) +
                      " rows whose data check failed (wrong > 0)");
    }
  }
}

// Merged copy rows by size (median time per size).
std::vector<SizeTime> merge_sizes(const std::vector<SizeTime>& rows) {
  std::map<double, std::vector<double>> by;
  for (const SizeTime& r : rows) by[r.bytes].push_back(r.time_s);
  std::vector<SizeTime> out;
  for (auto& [bytes, times] : by) out.push_back({bytes, median(times)});
  return out;
}

}  // namespace

FitResult fit_calibration(const std::vector<NcclTestsRun>& runs,
                          const std::vector<MeasurementFile>& files, const FitOptions& opt) {
  FitResult out;
  std::map<GroupKey, CollectivePoints> groups;
  std::map<std::pair<std::string, DType>, KernelPoints> kernels;
  std::map<std::string, std::vector<SizeTime>> copies;
  std::vector<double> launches;
  add_nccl_tests(runs, groups, out.notes);
  add_measurements(files, groups, kernels, copies, launches, out.notes);

  costmodel::Calibration& cal = out.calibration;
  // Provenance: the devices the inputs name, the command, the inputs.
  std::set<std::string> devices;
  for (const MeasurementFile& f : files) {
    if (!f.device.empty()) devices.insert(f.device);
    cal.provenance.inputs.push_back(f.path);
  }
  std::set<std::string> logs;
  for (const NcclTestsRun& r : runs) {
    if (!r.device_names.empty() && !r.device_names.front().empty()) devices.insert(r.device_names.front());
    if (logs.insert(r.file).second) cal.provenance.inputs.push_back(r.file);
  }
  for (const std::string& d : devices) {
    if (!cal.provenance.device.empty()) cal.provenance.device += " + ";
    cal.provenance.device += d;
  }
  if (cal.provenance.device.empty()) cal.provenance.device = "unknown";
  cal.provenance.date = opt.date.empty() ? now_utc() : opt.date;
  cal.provenance.command = opt.command;

  std::vector<ShapePoints> shapes;
  for (auto& [key, g] : groups) {
    std::vector<SizeTime> points;
    for (auto& [bytes, times] : g.times_by_bytes) points.push_back({bytes, median(times)});
    if (points.empty()) continue;
    CollectiveFitRow row;
    row.kind = std::get<0>(key);
    row.group = {std::get<1>(key), std::get<2>(key)};
    row.groups_per_node = std::get<3>(key);
    row.points = static_cast<int>(points.size());
    row.fit = fit_group(points, opt.bands);
    ShapePoints shape{row.kind, row.group, row.groups_per_node, points, {}};
    if (!g.choices_by_bytes.empty()) {
      for (const SizeTime& p : points) {
        auto it = g.choices_by_bytes.find(p.bytes);
        shape.choices.push_back(it == g.choices_by_bytes.end() ? std::nullopt : most_common(it->second));
      }
    }
    shapes.push_back(std::move(shape));

    costmodel::CollectiveCalibration cc;
    cc.kind = row.kind;
    cc.group = row.group;
    cc.groups_per_node = row.groups_per_node;
    cc.bands = row.fit.bands;
    if (opt.keep_measured) {
      for (const SizeTime& p : points) cc.measured.push_back({p.bytes, p.time_s});
    }
    for (const std::string& s : g.sources) {
      if (!cc.source.empty()) cc.source += ", ";
      cc.source += s;
    }
    cal.collectives.push_back(std::move(cc));
    out.collectives.push_back(std::move(row));
  }
  if (opt.link_tiers) {
    out.link_tiers = fit_link_tiers(shapes);
    for (const LinkTierFitRow& t : out.link_tiers) cal.link_tiers.push_back(t.tier);
  }
  if (!shapes.empty()) {
    if (opt.nccl_cluster && opt.nccl_cluster->nccl) {
      out.nccl_model = fit_nccl_model(*opt.nccl_cluster, shapes, opt.nccl_only, opt.nccl_per_protocol);
      for (const NcclModelFitRow& t : out.nccl_model) {
        cal.nccl_model.push_back(t.tier);
        if (t.unusable_choices > 0) {
          out.notes.push_back("nccl model: " + std::to_string(t.unusable_choices) +
                              " sizes logged an algorithm/protocol that NCCL's model does not offer on cluster " +
                              opt.nccl_cluster->name + " (e.g. CollNet); priced with the model's own pick");
        }
      }
      if (!cal.nccl_model.empty()) cal.nccl_basis = nccl_model_basis(*opt.nccl_cluster);
      if (!out.nccl_model.empty() && opt.nccl_only.any()) {
        out.notes.push_back("nccl model: fitted as the runs were made, with " + opt.nccl_only.env() +
                            ": sizes whose choice was not logged are priced with NCCL's choice among what that allows; "
                            "the calibration prices NCCL's own choice");
      }
    } else {
      out.notes.push_back(opt.nccl_cluster ? "cluster " + opt.nccl_cluster->name + " has no nccl block: NCCL's model not fitted"
                                           : "no --cluster: NCCL's model not fitted (give the cluster the calibration is for)");
    }
  }

  // Reference peak per dtype: given, or the best throughput measured in that dtype.
  std::map<DType, double> best;
  for (auto& [key, k] : kernels) {
    for (const KernelSample& s : k.samples) {
      best[key.second] = std::max(best[key.second], s.flops / s.time_s);
    }
  }
  EfficiencyFitOptions eopt = opt.efficiency;
  eopt.holdout_every = opt.bands.holdout_every;
  for (auto& [key, k] : kernels) {
    auto [op, dtype] = key;
    EfficiencyFitRow row;
    row.op = op;
    row.dtype = dtype;
    int conv_above_peak = 0;  // conv shapes faster than the given peak
    auto given = opt.peak_flops_per_s.find(dtype);
    if (given != opt.peak_flops_per_s.end()) {
      row.peak_flops_per_s = given->second;
      row.peak_source = opt.peak_source;
      // A convolution may beat the peak honestly: cuDNN's FFT and Winograd algorithms do fewer
      // multiplications than the direct convolution's FLOPs it is credited with (seen on an H200,
      // FP32 without TF32: 3x3 layers at up to 1.9x the FMA peak, calib/data/h200). Its table is
      // capped at efficiency 1 (the format's bound). A GEMM above the peak means a wrong peak.
      double best_gemm = 0;
      for (const KernelSample& s : k.samples) {
        if (op == "conv" && s.flops / s.time_s > given->second) ++conv_above_peak;
        if (op != "conv") best_gemm = std::max(best_gemm, s.flops / s.time_s);
      }
      if (best_gemm > 1.05 * given->second) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "a measured kernel reaches %.1f TFLOP/s, above the peak %.1f",
                      best_gemm / 1e12, given->second / 1e12);
        throw InputError(opt.peak_source, std::string(costmodel::dtype_name(dtype)), buf);
      }
    } else {
      row.peak_flops_per_s = best[dtype];
      row.peak_source = "best measured";
      out.notes.push_back("no peak FLOP/s given for " + std::string(costmodel::dtype_name(dtype)) +
                          ": " + op + " efficiencies are relative to the best measured kernel");
    }
    if (conv_above_peak > 0) {
      out.notes.push_back(op + " " + std::string(costmodel::dtype_name(dtype)) + ": " +
                          std::to_string(conv_above_peak) +
                          " shapes ran above the peak FLOP/s (FFT or Winograd algorithms do fewer "
                          "multiplications than the direct convolution they are credited with); "
                          "their efficiency is capped at 1");
    }
    row.fit = fit_efficiency(k.samples, row.peak_flops_per_s, eopt);

    costmodel::EfficiencyCalibration e;
    e.op = op;
    e.dtype = dtype;
    e.peak_flops_per_s = row.peak_flops_per_s;
    e.peak_source = row.peak_source;
    e.points = row.fit.points;
    e.shapes = row.fit.shapes;
    e.holdout_mape = row.fit.holdout_mape;
    cal.efficiency.push_back(std::move(e));
    out.efficiency.push_back(std::move(row));
  }

  for (const char* name : {"copy", "scale", "triad", "memcpy"}) {
    auto it = copies.find(name);
    if (it == copies.end()) continue;
    std::vector<SizeTime> merged;
    int in_cache = 0;
    for (const SizeTime& st : merge_sizes(it->second)) {
      if (st.bytes >= opt.hbm_min_bytes) merged.push_back(st);
      else ++in_cache;
    }
    if (in_cache > 0) {
      out.notes.push_back(std::string(name) + ": " + std::to_string(in_cache) + " sizes under " +
                          std::to_string(static_cast<long long>(opt.hbm_min_bytes / (1 << 20))) +
                          " MiB moved left out of the bandwidth fit (they can stay in L2)");
    }
    if (merged.size() < 2) {
      out.notes.push_back(std::string(name) + ": fewer than two sizes above the L2 cut-off, no bandwidth fit");
      continue;
    }
    out.hbm.push_back({name, fit_hbm(merged)});
  }
  if (!out.hbm.empty()) cal.memory.hbm_bytes_per_s = out.hbm.front().fit.bytes_per_s;
  if (!launches.empty()) {
    out.launch_overhead_s = launch_overhead_s(launches);
    cal.memory.launch_overhead_s = *out.launch_overhead_s;
  }

  if (cal.collectives.empty() && cal.efficiency.empty() && out.hbm.empty() &&
      !out.launch_overhead_s) {
    throw InputError("", "--nccl-tests/--measurements", "no measurements to fit");
  }
  return out;
}

}  // namespace autoddl::calib
