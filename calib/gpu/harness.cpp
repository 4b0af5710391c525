// The shared harness (see harness.hpp): options, output columns, timing loop, main wrapper.
// The table and the JSON rows are defined here and nowhere else.
#include "harness.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cupti_activity.hpp"

namespace autoddl::calib::gpu {

namespace {

std::string g_cupti_note;  // why kernel times are missing, once

[[noreturn]] void usage(const BenchInfo& info, const std::string& error) {
  std::FILE* out = error.empty() ? stdout : stderr;
  if (!error.empty()) std::fprintf(out, "%s: %s\n", info.name, error.c_str());
  std::fprintf(out,
               "%s: %s\n"
               "usage: %s [options]\n"
               "  -b, --min-bytes SIZE   smallest size of the sweep (default 8; K/M/G = 2^10/20/30)\n"
               "  -e, --max-bytes SIZE   largest size (default 1G)\n"
               "  -f, --factor X         size step factor (default 2)\n"
               "  -w, --warmup N         warm-up iterations (default 5)\n"
               "  -n, --iters N          timed iterations (default 20)\n"
               "      --cupti-iters N    iterations traced with CUPTI for kernel time (default 5; 0 off)\n"
               "  -c, --check 0|1        verify results where possible (default 1)\n"
               "  -g, --ngpus N          GPUs to use (default: all visible)\n"
               "      --dtypes LIST      fp32,fp16,bf16,fp8,mxfp8,nvfp4 (default fp32,fp16,bf16, and for GEMMs\n"
               "                         fp8 on compute capability 8.9+, mxfp8 and nvfp4 on 10.0+; conv:\n"
               "                         fp8, mxfp8 and nvfp4 rows are skipped)\n"
               "      --fp8-fast-accum   gemm fp8: cuBLASLt fast accumulation (default: full precision)\n"
               "      --dims LIST        M/N/K values of the GEMM grid\n"
               "      --batch N          conv batch size (default 32)\n"
               "      --no-tf32          conv: fp32 on FMA units only (default: TF32 allowed, as PyTorch)\n"
               "      --quick            smaller sweeps (max 64M, fewer shapes, 10 iterations)\n"
               "      --group-ranks N    NCCL, one process per GPU (MPI build): groups of N ranks\n"
               "      --ranks-per-node N   with N of them on each node they span (default: N)\n"
               "      --groups-per-node K  K such groups at once, sharing the NICs (default 1)\n"
               "      --launch graph|stream  timed loop as one CUDA graph per GPU, or launched call by call\n"
               "                         (default: graph for the NCCL programs without --group-ranks)\n"
               "      --nccl-log PATTERN NCCL: NCCL's debug log per process (NCCL_DEBUG_FILE, %%h host, %%p pid) with\n"
               "                         NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING, unless NCCL_DEBUG is set\n"
               "      --json FILE        write result rows (autoddl-measurements/1)\n"
               "      --trace FILE       write a Chrome trace of every GPU activity\n",
               info.name, info.description, info.name);
  std::exit(error.empty() ? 0 : 2);
}

size_t parse_size(const std::string& s, const BenchInfo& info) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  double mult = 1;
  if (end && *end) {
    switch (*end) {
      case 'K': case 'k': mult = 1024.0; break;
      case 'M': case 'm': mult = 1024.0 * 1024; break;
      case 'G': case 'g': mult = 1024.0 * 1024 * 1024; break;
      default: usage(info, "bad size '" + s + "'");
    }
    if (end[1] != '\0') usage(info, "bad size '" + s + "'");
  }
  if (s.empty() || !(v >= 0)) usage(info, "bad size '" + s + "'");
  return static_cast<size_t>(v * mult);
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i <= s.size()) {
    size_t j = s.find(',', i);
    if (j == std::string::npos) j = s.size();
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

std::string shape_text(const Row& r) {
  std::string s;
  for (auto& [k, v] : r.shape) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s%s=%g", s.empty() ? "" : " ", k.c_str(), v);
    s += buf;
  }
  for (auto& [k, v] : r.tags) {
    if (!s.empty()) s += ' ';
    s += k + "=" + v;
  }
  return s;
}

}  // namespace

std::string now_utc() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string version_text(int v) {  // 13000 -> "13.0"
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::vector<size_t> Options::sizes() const {
  std::vector<size_t> out;
  double f = std::max(factor, 1.0001);
  for (double b = std::max<size_t>(min_bytes, 1); b <= double(max_bytes) * (1 + 1e-9); b *= f) {
    size_t s = static_cast<size_t>(b + 0.5);
    if (out.empty() || s != out.back()) out.push_back(s);
  }
  return out;
}

Options parse_options(int argc, char** argv, const BenchInfo& info) {
  Options o;
  for (int i = 0; i < argc; ++i) o.argv.push_back(argv[i]);
  auto value = [&](int& i) -> std::string {
    if (i + 1 >= argc) usage(info, std::string(argv[i]) + " needs a value");
    return argv[++i];
  };
  auto integer = [&](int& i, int min_value) {
    std::string v = value(i);
    char* end = nullptr;
    long x = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end || x < min_value) usage(info, "bad value '" + v + "' for " + argv[i - 1]);
    return static_cast<int>(x);
  };
  bool max_given = false, iters_given = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") usage(info, "");
    else if (a == "-b" || a == "--min-bytes") o.min_bytes = parse_size(value(i), info);
    else if (a == "-e" || a == "--max-bytes") o.max_bytes = parse_size(value(i), info), max_given = true;
    else if (a == "-f" || a == "--factor") {
      std::string v = value(i);
      o.factor = std::strtod(v.c_str(), nullptr);
      if (!(o.factor > 1)) usage(info, "the factor must be > 1");
    } else if (a == "-w" || a == "--warmup") o.warmup = integer(i, 0);
    else if (a == "-n" || a == "--iters") o.iters = integer(i, 1), iters_given = true;
    else if (a == "--cupti-iters") o.cupti_iters = integer(i, 0);
    else if (a == "-c" || a == "--check") o.check = integer(i, 0) != 0;
    else if (a == "-g" || a == "--ngpus") o.ngpus = integer(i, 1);
    else if (a == "--batch") o.batch = integer(i, 1);
    else if (a == "--no-tf32") o.tf32 = false;
    else if (a == "--fp8-fast-accum") o.fp8_fast_accum = true;
    else if (a == "--dtypes") {
      o.dtypes = split(value(i));
      o.dtypes_given = true;
      for (const std::string& d : o.dtypes) {
        if (d != "fp32" && d != "fp16" && d != "bf16" && d != "fp8" && d != "mxfp8" && d != "nvfp4") {
          usage(info, "unknown dtype '" + d + "'");
        }
      }
    } else if (a == "--dims") {
      o.dims.clear();
      for (const std::string& d : split(value(i))) o.dims.push_back(static_cast<int64_t>(parse_size(d, info)));
    } else if (a == "--group-ranks") o.group_ranks = integer(i, 1);
    else if (a == "--ranks-per-node") o.ranks_per_node = integer(i, 1);
    else if (a == "--groups-per-node") o.groups_per_node = integer(i, 1);
    else if (a == "--launch") {
      o.launch = value(i);
      if (o.launch != "graph" && o.launch != "stream") usage(info, "--launch takes graph or stream");
    } else if (a == "--quick") o.quick = true;
    else if (a == "--json") o.json_path = value(i);
    else if (a == "--nccl-log") o.nccl_log = value(i);
    else if (a == "--trace") o.trace_path = value(i);
    else usage(info, "unknown option '" + a + "'");
  }
  if (o.min_bytes > o.max_bytes) usage(info, "--min-bytes is larger than --max-bytes");
  if (o.group_ranks > 0 && o.ranks_per_node == 0) o.ranks_per_node = o.group_ranks;
  // Started by a launcher (srun, mpirun) on every GPU without --group-ranks: each rank measures
  // its own GPU; rank 0 writes FILE, rank R FILE's stem + ".rank<R>.json" and prints nothing, so
  // a slow GPU shows up in its own file and one table stays readable.
  if (o.group_ranks == 0) {
    int rank = 0;
    for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
      if (const char* v = std::getenv(var)) {
        rank = std::atoi(v);
        break;
      }
    }
    if (rank > 0) {
      const std::string tag = ".rank" + std::to_string(rank);
      for (std::string* path : {&o.json_path, &o.trace_path}) {
        if (path->empty()) continue;
        const size_t dot = path->rfind(".json");
        *path = dot == std::string::npos ? *path + tag : path->substr(0, dot) + tag + path->substr(dot);
      }
      if (!std::freopen("/dev/null", "w", stdout)) std::perror("stdout");
    }
  }
  if (o.ranks_per_node > o.group_ranks && o.group_ranks > 0) usage(info, "--ranks-per-node exceeds --group-ranks");
  if (o.quick) {
    if (!max_given) o.max_bytes = std::min<size_t>(o.max_bytes, 64 << 20);
    if (!iters_given) o.iters = 10;
    o.cupti_iters = std::min(o.cupti_iters, 3);
  }
  return o;
}

size_t dtype_size(const std::string& dtype) { return dtype == "fp32" ? 4 : dtype == "fp8" || dtype == "mxfp8" ? 1 : 2; }

// ---- Report --------------------------------------------------------------------------------

struct Report::Impl {
  BenchInfo info;
  Options opt;
  nlohmann::json rows = nlohmann::json::array();
  nlohmann::json versions = nlohmann::json::object();
  bool header_printed = false;

  void header() {
    if (header_printed) return;
    header_printed = true;
    std::printf("# %-12s %12s %12s %5s %5s %10s %10s %8s %8s %9s %7s  %s\n", "name", "size", "count",
                "dtype", "ranks", "time", "kernel", "algbw", "busbw", "flop/s", "#wrong", "shape");
    std::printf("# %-12s %12s %12s %5s %5s %10s %10s %8s %8s %9s %7s\n", "", "(B)", "(elements)", "",
                "", "(us)", "(us)", "(GB/s)", "(GB/s)", "(TFLOP/s)", "");
  }
};

Report::Report(const BenchInfo& info, const Options& opt) : impl_(std::make_shared<Impl>()) {
  impl_->info = info;
  impl_->opt = opt;
  int v = 0;
  if (cudaRuntimeGetVersion(&v) == cudaSuccess) impl_->versions["cuda_runtime"] = version_text(v);
  if (cudaDriverGetVersion(&v) == cudaSuccess && v > 0) impl_->versions["cuda_driver"] = version_text(v);
  std::printf("# %s: %s\n", info.name, info.description);
}

void Report::version(const std::string& library, const std::string& version) {
  impl_->versions[library] = version;
}

void Report::note(const std::string& line) {
  std::printf("# %s\n", line.c_str());
  std::fflush(stdout);
}

void Report::add(Row r) {
  impl_->header();
  double s = r.time_us * 1e-6;
  if (s > 0 && r.algbw_GBps == 0 && r.size_bytes > 0) r.algbw_GBps = r.size_bytes / 1e9 / s;
  double tflops = s > 0 ? r.flops / s / 1e12 : 0;
  char kernel[32] = "-", wrong[32] = "N/A";
  if (r.kernel_us >= 0) std::snprintf(kernel, sizeof kernel, "%.2f", r.kernel_us);
  if (r.wrong >= 0) std::snprintf(wrong, sizeof wrong, "%lld", static_cast<long long>(r.wrong));
  if (r.skipped.empty()) {
    std::printf("  %-12s %12.0f %12lld %5s %5d %10.2f %10s %8.2f %8.2f %9.2f %7s  %s\n", r.name.c_str(),
                r.size_bytes, static_cast<long long>(r.count), r.dtype.c_str(), r.ranks, r.time_us,
                kernel, r.algbw_GBps, r.busbw_GBps, tflops, wrong, shape_text(r).c_str());
  } else {
    std::printf("  %-12s %12.0f %12lld %5s %5d  skipped: %s  %s\n", r.name.c_str(), r.size_bytes,
                static_cast<long long>(r.count), r.dtype.c_str(), r.ranks, r.skipped.c_str(),
                shape_text(r).c_str());
  }
  std::fflush(stdout);

  nlohmann::json shape = nlohmann::json::object();
  for (auto& [k, v] : r.shape) shape[k] = v;
  for (auto& [k, v] : r.tags) shape[k] = v;
  nlohmann::json j = {{"name", r.name},
                      {"size_bytes", r.size_bytes},
                      {"count", r.count},
                      {"dtype", r.dtype},
                      {"ranks", r.ranks},
                      {"ranks_per_node", r.ranks_per_node},
                      {"time_us", r.skipped.empty() ? r.time_us : 0.0},
                      {"kernel_us", nullptr},
                      {"algbw_GBps", r.algbw_GBps},
                      {"busbw_GBps", r.busbw_GBps},
                      {"flops", r.flops},
                      {"tflops", tflops},
                      {"wrong", nullptr},
                      {"shape", shape},
                      {"skipped", nullptr}};
  if (r.groups_per_node > 1) j["groups_per_node"] = r.groups_per_node;
  if (r.kernel_us >= 0) j["kernel_us"] = r.kernel_us;
  if (r.wrong >= 0) j["wrong"] = r.wrong;
  if (!r.skipped.empty()) j["skipped"] = r.skipped;
  impl_->rows.push_back(j);
}

void Report::skip(Row row, const std::string& reason) {
  row.skipped = reason.empty() ? "skipped" : reason;
  add(std::move(row));
}

int Report::finish() {
  if (!g_cupti_note.empty()) note(g_cupti_note);
  if (!impl_->opt.trace_path.empty() && ActivityRecorder::instance().init().empty()) {
    auto recs = ActivityRecorder::instance().all();
    write_chrome_trace(recs, impl_->opt.trace_path);
    note("trace: " + std::to_string(recs.size()) + " activities in " + impl_->opt.trace_path);
  }
  if (impl_->opt.json_path.empty()) return 0;
  std::string device = "none";
  int n = 0;
  if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, 0) == cudaSuccess) device = p.name;
  }
  char host[256] = "unknown";
  gethostname(host, sizeof host - 1);
  std::string command;
  for (const std::string& a : impl_->opt.argv) {
    if (!command.empty()) command += ' ';
    command += a;
  }
  nlohmann::json doc = {{"format", "autoddl-measurements/1"},
                        {"benchmark", impl_->info.name},
                        {"provenance",
                         {{"device", device},
                          {"date", now_utc()},
                          {"command", command},
                          {"host", host},
                          {"versions", impl_->versions}}},
                        {"rows", impl_->rows}};
  std::string tmp = impl_->opt.json_path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp);
    out << doc.dump(1) << "\n";
    if (!out) {
      std::fprintf(stderr, "%s: cannot write %s\n", impl_->info.name, tmp.c_str());
      return 1;
    }
  }
  if (std::rename(tmp.c_str(), impl_->opt.json_path.c_str()) != 0) {
    std::fprintf(stderr, "%s: cannot write %s\n", impl_->info.name, impl_->opt.json_path.c_str());
    std::remove(tmp.c_str());
    return 1;
  }
  note("wrote " + impl_->opt.json_path);
  return 0;
}

// ---- timing --------------------------------------------------------------------------------

namespace {

// Captures `calls` calls of op() with every stream in capture at once (a grouped NCCL call
// launches on all of them), one graph per stream; "" on success, else why not (then `out` is
// empty and no stream is left capturing).
std::string capture_graphs(int calls, const std::vector<int>& devices, const std::vector<cudaStream_t>& streams,
                           const std::function<void()>& op, std::vector<cudaGraphExec_t>& out) {
  std::string why;
  size_t begun = 0;
  for (; begun < streams.size() && why.empty(); ++begun) {
    CALIB_CHECK(cudaSetDevice(devices[begun]));
    cudaError_t e = cudaStreamBeginCapture(streams[begun], cudaStreamCaptureModeThreadLocal);
    if (e != cudaSuccess) {
      why = "cudaStreamBeginCapture: " + Status<cudaError_t>::text(e);
      break;
    }
  }
  if (why.empty()) {
    try {
      for (int i = 0; i < calls; ++i) op();
    } catch (const CalibError& err) {
      why = err.what();
    }
  }
  std::vector<cudaGraph_t> graphs(begun, nullptr);
  for (size_t i = 0; i < begun; ++i) {
    cudaSetDevice(devices[i]);
    cudaError_t e = cudaStreamEndCapture(streams[i], &graphs[i]);
    if (why.empty() && e != cudaSuccess) why = "cudaStreamEndCapture: " + Status<cudaError_t>::text(e);
  }
  for (size_t i = 0; i < begun && why.empty(); ++i) {
    cudaSetDevice(devices[i]);
    cudaGraphExec_t exec = nullptr;
    cudaError_t e = cudaGraphInstantiate(&exec, graphs[i], 0);
    if (e != cudaSuccess) {
      why = "cudaGraphInstantiate: " + Status<cudaError_t>::text(e);
    } else {
      out.push_back(exec);
    }
  }
  for (cudaGraph_t g : graphs) {
    if (g) cudaGraphDestroy(g);
  }
  if (!why.empty()) {
    for (cudaGraphExec_t g : out) cudaGraphExecDestroy(g);
    out.clear();
    cudaGetLastError();  // clear the (non-sticky) error a failed capture leaves
  }
  return why;
}

}  // namespace

Timed time_op(const Options& opt, const std::vector<int>& devices,
              const std::vector<cudaStream_t>& streams, const std::function<void()>& op) {
  auto sync_all = [&] {
    for (size_t i = 0; i < streams.size(); ++i) {
      CALIB_CHECK(cudaSetDevice(devices[i]));
      CALIB_CHECK(cudaStreamSynchronize(streams[i]));
    }
  };
  for (int i = 0; i < opt.warmup; ++i) op();
  sync_all();

  Timed t;
  t.launch = opt.launch == "graph" ? "graph" : "stream";
  std::vector<cudaGraphExec_t> graphs;
  if (t.launch == "graph") {
    t.launch_note = capture_graphs(opt.iters, devices, streams, op, graphs);
    if (!t.launch_note.empty()) t.launch = "stream";
    for (size_t i = 0; i < graphs.size(); ++i) {  // the first launch uploads: not timed
      CALIB_CHECK(cudaSetDevice(devices[i]));
      CALIB_CHECK(cudaGraphLaunch(graphs[i], streams[i]));
    }
    sync_all();
  }

  std::vector<cudaEvent_t> start(streams.size()), stop(streams.size());
  for (size_t i = 0; i < streams.size(); ++i) {
    CALIB_CHECK(cudaSetDevice(devices[i]));
    CALIB_CHECK(cudaEventCreate(&start[i]));
    CALIB_CHECK(cudaEventCreate(&stop[i]));
    CALIB_CHECK(cudaEventRecord(start[i], streams[i]));
  }
  if (!graphs.empty()) {
    for (size_t i = 0; i < graphs.size(); ++i) {
      CALIB_CHECK(cudaSetDevice(devices[i]));
      CALIB_CHECK(cudaGraphLaunch(graphs[i], streams[i]));
    }
  } else {
    for (int i = 0; i < opt.iters; ++i) op();
  }
  for (size_t i = 0; i < streams.size(); ++i) {
    CALIB_CHECK(cudaSetDevice(devices[i]));
    CALIB_CHECK(cudaEventRecord(stop[i], streams[i]));
  }
  for (size_t i = 0; i < streams.size(); ++i) {
    CALIB_CHECK(cudaSetDevice(devices[i]));
    CALIB_CHECK(cudaEventSynchronize(stop[i]));
    float ms = 0;
    CALIB_CHECK(cudaEventElapsedTime(&ms, start[i], stop[i]));
    t.time_us = std::max(t.time_us, ms * 1e3 / opt.iters);
    CALIB_CHECK(cudaEventDestroy(start[i]));
    CALIB_CHECK(cudaEventDestroy(stop[i]));
  }
  for (cudaGraphExec_t g : graphs) CALIB_CHECK(cudaGraphExecDestroy(g));

  if (opt.cupti_iters > 0) {
    ActivityRecorder& rec = ActivityRecorder::instance();
    if (rec.start()) {
      for (int i = 0; i < opt.cupti_iters; ++i) op();
      sync_all();
      t.kernel_us = busy_us_per_iter(rec.stop(), opt.cupti_iters);
    } else if (g_cupti_note.empty()) {
      g_cupti_note = "CUPTI unavailable, no kernel times: " + rec.init();
    }
  }
  return t;
}

std::string no_gpu_reason() {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    int driver = 0;
    cudaDriverGetVersion(&driver);
    std::string why = driver_too_old(driver, CUDART_VERSION);
    return "cudaGetDeviceCount: " + Status<cudaError_t>::text(e) + (why.empty() ? "" : "; " + why);
  }
  if (n == 0) return "no CUDA device";
  return "";
}

int run_main(int argc, char** argv, const BenchInfo& info,
             const std::function<void(const Options&, Report&)>& body) {
  Options opt = parse_options(argc, argv, info);
  Report report(info, opt);
  std::string why = no_gpu_reason();
  if (!why.empty()) {
    Row r;
    r.name = info.name;
    report.skip(r, "no usable GPU: " + why);
    return report.finish();
  }
  if (!opt.trace_path.empty()) {
    ActivityRecorder& rec = ActivityRecorder::instance();
    rec.keep_all(true);
    if (!rec.start()) report.note("CUPTI unavailable, no trace: " + rec.init());
  }
  try {
    body(opt, report);
  } catch (const CalibError& e) {
    report.note(std::string("error: ") + e.what());
    report.finish();
    std::fprintf(stderr, "%s: %s\n", info.name, e.what());
    return 1;
  }
  return report.finish();
}

}  // namespace autoddl::calib::gpu
