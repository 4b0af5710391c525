// The result files our GPU microbenchmarks write (calib/gpu/, one JSON per program run;
// schema "autoddl-measurements/1" in docs/calibration-json.md). Every row has the same fixed
// columns, whatever the benchmark; benchmark-specific parameters (M, N, K; conv geometry;
// in-place or not) sit in the free-form `shape` object. A row that could not run carries the
// reason in `skipped` and zeros elsewhere.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "autoddl/calib/nccl_debug_log.hpp"

namespace autoddl::calib {

struct MeasurementRow {
  std::string name;  // "all_reduce", ..., "gemm", "conv", "memcpy", "copy", "scale", "triad", "launch"
  double size_bytes = 0;  // collectives: nccl-tests size; kernels: bytes read + written
  int64_t count = 0;      // elements
  std::string dtype;      // "fp32", "fp16", "bf16"
  int ranks = 1;
  int ranks_per_node = 1;
  int groups_per_node = 1;          // groups measured at once (optional key; they share NICs)
  double time_us = 0;               // CUDA-event time per operation
  std::optional<double> kernel_us;  // CUPTI kernel time per operation, when traced
  double algbw_GBps = 0;
  double busbw_GBps = 0;
  double flops = 0;
  double tflops = 0;
  std::optional<int64_t> wrong;  // elements that failed the check; empty when not checked
  nlohmann::json shape = nlohmann::json::object();
  std::string skipped;  // non-empty: not measured, and why
  // NCCL's algorithm, protocol (and channels, when printed) for this size, read from NCCL's
  // debug log (optional keys nccl_algo, nccl_proto, nccl_channels).
  std::optional<NcclChoice> nccl;
};

struct MeasurementFile {
  std::string path;
  std::string benchmark;  // "gemm_cublaslt", "nccl_all_reduce", ...
  std::string device;
  std::string date;
  std::string command;
  std::string host;
  nlohmann::json versions = nlohmann::json::object();
  std::vector<MeasurementRow> rows;
  std::optional<NcclRunInfo> nccl;  // NCCL's version, settings and communicators (optional key "nccl")
};

// Strict: unknown or missing keys give InputError(source, "<field path>", reason).
MeasurementFile measurements_from_json(const nlohmann::json& j, const std::string& source);
MeasurementFile load_measurement_file(const std::string& path);
// The inverse of measurements_from_json (measurements_from_json(measurements_to_json(m)) == m).
nlohmann::json measurements_to_json(const MeasurementFile& m);

// Attaches NCCL's logged choice to every measured collective row of `m` that has one in `log`
// (nccl_choice_at by the row's name, ranks and size) and the log's run info to m.nccl (with
// `log_files`); returns the rows that got a choice.
int attach_nccl_log(MeasurementFile& m, const NcclDebugLog& log, const std::vector<std::string>& log_files);
// The same on files: reads the NCCL debug logs, attaches them to the measurement file at `path`
// and rewrites it (atomically); returns the rows that got a choice. InputError if the
// measurement file is unreadable or malformed, or a log cannot be read. Logs without a
// single NCCL line leave the file untouched.
int attach_nccl_log_files(const std::string& path, const std::vector<std::string>& log_files);
// The same for a file that may be something else `autoddl calibrate` writes beside the
// measurements (gpu_info.json, a CUPTI trace): a JSON object whose "format" is not
// "autoddl-measurements/1" (or that has none) gives nullopt and says why in `why_not`, so that
// `fit --measurements OUT/*.json` takes the folder as written. A file that claims the format
// but is malformed is still an InputError.
std::optional<MeasurementFile> load_measurement_file_if_any(const std::string& path, std::string& why_not);

}  // namespace autoddl::calib
