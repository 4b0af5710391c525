// validate_runner: runs a validation plan (docs/validation-plan.md, written by `autoddl
// validate --plan-out`) on this machine's GPUs and writes measured vs predicted per step, op
// and iteration. One process drives every rank, one thread and one GPU per rank (rank r on
// GPU r), NCCL communicators per mesh-dim group made with ncclCommInitAll; one GPU runs world
// size 1 with no communication. -w warm-up iterations, then two timed passes of -n iterations
// (issue 16, defect 7): the iteration pass, all iterations enqueued back to back with events
// only between them (or, --graph, each rank's iteration as one CUDA graph), gives iteration_s;
// the per-step pass, a host barrier and CUDA events around every step per iteration, gives
// step_s (its iteration times, which include the events and launch gaps, are
// stepped_iteration_s). Then --cupti-iters more under CUPTI with an external correlation id
// per step for kernel time per step. No GPU, too few
// GPUs, or buffers that do not fit: one line, a skipped result (with --out), exit 2.
// Under a launcher (mpirun / srun started more than one process, or --mpi; MPI builds only):
// one process per rank and GPU (world rank r runs plan rank r on GPU local-rank % visible),
// the NCCL world communicator from ncclCommInitRank (id broadcast over MPI) split into the
// plan's groups, MPI barriers where the threads meet, each rank's times gathered to rank 0,
// which compares (the slowest rank per iteration, as in one process) and writes the result.
// Links CUDA, cuBLASLt, NCCL and CUPTI only (plus header-only nlohmann_json).
#include <unistd.h>

#include <atomic>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "autoddl/calib/validation_compare.hpp"
#include "autoddl/costmodel/error.hpp"
#include "cupti_activity.hpp"
#include "harness.hpp"
#include "validate_launch.hpp"
#include "validate_rank.hpp"

using namespace autoddl;
using namespace autoddl::calib;
using namespace autoddl::calib::gpu;

namespace {

struct Args {
  std::string plan, out, trace;
  int warmup = 5, iters = 20, cupti_iters = 3;
  bool overlap = true, quiet = false, graph = false;
  std::string mpi;  // "on" (--mpi), "off" (--no-mpi), "": from the launcher's environment
  std::vector<std::string> argv;
};

[[noreturn]] void usage(const std::string& error) {
  std::FILE* f = error.empty() ? stdout : stderr;
  if (!error.empty()) std::fprintf(f, "validate_runner: %s\n", error.c_str());
  std::fprintf(f,
               "validate_runner: run a validation plan on this machine's GPUs, measured vs predicted\n"
               "usage: validate_runner --plan PLAN.json [options]\n"
               "  --plan FILE          the plan (autoddl validate --plan-out FILE)\n"
               "  --out FILE           write the result (autoddl-validation-result/1); for autoddl validate --measured\n"
               "  -w, --warmup N       warm-up iterations (default 5)\n"
               "  -n, --iters N        timed iterations (default 20)\n"
               "      --cupti-iters N  iterations traced with CUPTI for kernel time per step (default 3; 0 off)\n"
               "      --serial-comm    run gradient sync on the compute stream (no overlap)\n"
               "      --graph          time iterations as one CUDA graph per rank (default: steps enqueued\n"
               "                       back to back; either way without per-step events)\n"
               "      --trace FILE     Chrome trace of the CUPTI iterations\n"
               "      --quiet          no table on stdout\n"
               "      --mpi, --no-mpi  one process per rank over MPI (default: when mpirun or srun started\n"
               "                       more than one process; MPI builds only)\n");
  std::exit(error.empty() ? 0 : 2);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 0; i < argc; ++i) a.argv.push_back(argv[i]);
  auto value = [&](int& i) -> std::string {
    if (i + 1 >= argc) usage(std::string(argv[i]) + " needs a value");
    return argv[++i];
  };
  auto integer = [&](int& i, int min) {
    std::string v = value(i);
    char* end = nullptr;
    long x = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end || x < min) usage("bad value '" + v + "' for " + argv[i - 1]);
    return static_cast<int>(x);
  };
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    if (s == "-h" || s == "--help") usage("");
    else if (s == "--plan") a.plan = value(i);
    else if (s == "--out") a.out = value(i);
    else if (s == "-w" || s == "--warmup") a.warmup = integer(i, 0);
    else if (s == "-n" || s == "--iters") a.iters = integer(i, 1);
    else if (s == "--cupti-iters") a.cupti_iters = integer(i, 0);
    else if (s == "--serial-comm") a.overlap = false;
    else if (s == "--graph") a.graph = true;
    else if (s == "--trace") a.trace = value(i);
    else if (s == "--quiet") a.quiet = true;
    else if (s == "--mpi") a.mpi = "on";
    else if (s == "--no-mpi") a.mpi = "off";
    else usage("unknown option '" + s + "'");
  }
  if (a.plan.empty()) usage("--plan is required");
  return a;
}

class Barrier {
 public:
  explicit Barrier(int n) : n_(n) {}
  void wait() {
    std::unique_lock<std::mutex> lock(mu_);
    const long gen = generation_;
    if (++waiting_ == n_) {
      waiting_ = 0;
      ++generation_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return generation_ != gen; });
    }
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int n_, waiting_ = 0;
  long generation_ = 0;
};


void provenance(ValidationResult& r, const Args& a) {
  for (const std::string& s : a.argv) r.command += (r.command.empty() ? "" : " ") + s;
  r.date = now_utc();
  char host[256] = "unknown";
  gethostname(host, sizeof host - 1);
  r.host = host;
  r.device = "none";
  int n = 0, v = 0;
  if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, 0) == cudaSuccess) r.device = p.name;
  }
  if (cudaRuntimeGetVersion(&v) == cudaSuccess) r.versions.emplace_back("cuda_runtime", version_text(v));
  if (cudaDriverGetVersion(&v) == cudaSuccess && v > 0) r.versions.emplace_back("cuda_driver", version_text(v));
  if (ncclGetVersion(&v) == ncclSuccess) {
    r.versions.emplace_back("nccl", std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
                                        std::to_string(v % 100));
  }
  r.versions.emplace_back("cublasLt", std::to_string(cublasLtGetVersion()));
}

void write_result(const std::string& path, const ValidationResult& r, const Comparison* c) {
  if (path.empty()) return;
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp);
    out << result_file_text(r, c);
    if (!out) throw CalibError("write " + tmp, __FILE__, __LINE__, "cannot write the result");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw CalibError("rename " + tmp, __FILE__, __LINE__, "cannot write " + path);
  }
}

// Runs `iterations` per-step iterations on every rank's thread; timed ones (index >=
// timed_from) add their step seconds to `step_sum` and their iteration seconds to the rank's
// stepped_iteration_s. A failing rank ends the process: its peers would wait forever.
void run_phase(std::vector<std::unique_ptr<RankRunner>>& ranks, int iterations, int timed_from, bool tag,
               std::vector<std::vector<double>>& step_sum, ValidationResult& res) {
  const int n = static_cast<int>(ranks.size());
  Barrier barrier(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      try {
        CALIB_CHECK(cudaSetDevice(r));
        for (int it = 0; it < iterations; ++it) {
          barrier.wait();
          ranks[r]->enqueue_iteration(tag);
          const bool timed = it >= timed_from;
          double s = ranks[r]->finish_iteration(timed ? &step_sum[r] : nullptr);
          if (timed) res.ranks[r].stepped_iteration_s.push_back(s);
        }
      } catch (const std::exception& e) {
        std::fprintf(stderr, "validate_runner: rank %d: %s\n", r, e.what());
        std::fflush(stderr);
        std::_Exit(1);
      }
    });
  }
  for (std::thread& t : threads) t.join();
}

// The iteration pass on every rank's thread: iteration_s of every rank. With `graph`, each rank
// first captures its iteration; if any rank cannot, all enqueue their steps instead (`why`).
// Returns the pass that ran: "graph" or "stream".
std::string run_iteration_phase(std::vector<std::unique_ptr<RankRunner>>& ranks, int iterations, bool graph,
                                ValidationResult& res, std::string& why) {
  const int n = static_cast<int>(ranks.size());
  Barrier barrier(n);
  std::vector<std::string> failed(n);
  std::atomic<bool> use_graph{graph};
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      try {
        CALIB_CHECK(cudaSetDevice(r));
        if (graph) {
          failed[r] = ranks[r]->capture_graph();
          if (!failed[r].empty()) use_graph = false;
        }
        barrier.wait();  // every capture is decided before any rank launches
        res.ranks[r].iteration_s = ranks[r]->run_iteration_pass(iterations, use_graph);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "validate_runner: rank %d: %s\n", r, e.what());
        std::fflush(stderr);
        std::_Exit(1);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int r = 0; r < n && why.empty(); ++r) {
    if (!failed[r].empty()) why = "rank " + std::to_string(r) + ": " + failed[r];
  }
  return use_graph ? "graph" : "stream";
}

// Kernel seconds per (rank, step) from the CUPTI pass: kernels, copies and memsets whose
// launch carried the step's external id.
void attribute_kernels(const std::vector<ActivityRecord>& recs, int iterations, ValidationResult& res) {
  std::map<uint32_t, uint64_t> external;
  for (const ActivityRecord& r : recs) {
    if (r.kind == "external") external[r.correlation] = r.external_id;
  }
  std::vector<std::vector<double>> sum(res.ranks.size());
  for (size_t r = 0; r < res.ranks.size(); ++r) sum[r].assign(res.ranks[r].step_s.size(), -1);
  for (const ActivityRecord& r : recs) {
    if (r.kind == "external") continue;
    auto it = external.find(r.correlation);
    if (it == external.end()) continue;
    const size_t rank = it->second >> 32, step = it->second & 0xffffffffu;
    if (rank >= sum.size() || step >= sum[rank].size()) continue;
    double& s = sum[rank][step];
    s = std::max(s, 0.0) + double(r.end_ns - r.start_ns) * 1e-9;
  }
  for (size_t r = 0; r < res.ranks.size(); ++r) {
    for (size_t i = 0; i < sum[r].size(); ++i) {
      res.ranks[r].step_kernel_s[i] = sum[r][i] < 0 ? -1 : sum[r][i] / iterations;
    }
  }
}

int skipped(const Args& a, ValidationResult& res, const std::string& why) {
  res.skipped = why;
  write_result(a.out, res, nullptr);
  std::printf("validate_runner: skipped: %s\n", why.c_str());
  return 2;
}

// The result's header: provenance, what was run and how, the same for both ways of running.
void start_result(ValidationResult& res, const ValidationPlan& plan, const Args& a) {
  provenance(res, a);
  res.model = plan.model, res.cluster = plan.cluster, res.scheme = plan.scheme;
  res.fingerprint = plan_fingerprint(plan);
  res.warmup = a.warmup, res.iters = a.iters, res.cupti_iters = a.cupti_iters;
  res.overlap_grad_sync = a.overlap;
}

// Runs one way of running; a CUDA/NCCL/MPI failure or a bad input ends it with exit code 1
// and the reason on stderr.
template <class Body>
int guarded(Body&& body) {
  try {
    return body();
  } catch (const CalibError& e) {
    std::fprintf(stderr, "validate_runner: %s\n", e.what());
    return 1;
  } catch (const InputError& e) {
    std::fprintf(stderr, "validate_runner: %s\n", e.what());
    return 1;
  }
}

// Rank 0's last step, the same for both ways of running: compare with the plan's predictions,
// write the result and print the comparison.
int report(const ValidationPlan& plan, const ValidationResult& res, const Args& a) {
  Comparison cmp = compare_validation(plan, res, a.out.empty() ? "validate_runner" : a.out);
  write_result(a.out, res, &cmp);
  if (!a.quiet) {
    std::printf("%s", format_comparison(cmp, 15).c_str());
    if (!a.out.empty()) std::printf("# wrote %s\n", a.out.c_str());
  }
  return 0;
}

#ifdef AUTODDL_WITH_MPI
// ---- one process per rank (MPI) ----

// Some rank's reason, the lowest such rank's, on every rank ("rank k: ..."); "" if none has one.
std::string agree(const std::string& mine) {
  int me = 0;
  CALIB_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
  int who = mine.empty() ? INT_MAX : me;
  CALIB_CHECK(MPI_Allreduce(MPI_IN_PLACE, &who, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
  if (who == INT_MAX) return "";
  int len = me == who ? static_cast<int>(mine.size()) : 0;
  CALIB_CHECK(MPI_Bcast(&len, 1, MPI_INT, who, MPI_COMM_WORLD));
  std::string text = me == who ? mine : std::string(len, ' ');
  CALIB_CHECK(MPI_Bcast(text.data(), len, MPI_CHAR, who, MPI_COMM_WORLD));
  return "rank " + std::to_string(who) + ": " + text;
}

// run_phase for this process's rank: an MPI barrier where the threads meet.
void run_phase_mpi(RankRunner& me, int rank, int iterations, int timed_from, bool tag, std::vector<double>& step_sum,
                   ValidationResult& res) {
  for (int it = 0; it < iterations; ++it) {
    CALIB_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    me.enqueue_iteration(tag);
    const bool timed = it >= timed_from;
    double s = me.finish_iteration(timed ? &step_sum : nullptr);
    if (timed) res.ranks[rank].stepped_iteration_s.push_back(s);
  }
}

// Every rank's measurement to rank 0: device, the four lengths, then the four series.
void gather_ranks(ValidationResult& res, int me, int size) {
  constexpr int kTag = 16;
  if (me != 0) {
    const RankMeasurement& m = res.ranks[me];
    std::vector<double> v = {double(m.device), double(m.step_s.size()), double(m.step_kernel_s.size()),
                             double(m.iteration_s.size()), double(m.stepped_iteration_s.size())};
    for (const auto* series : {&m.step_s, &m.step_kernel_s, &m.iteration_s, &m.stepped_iteration_s}) {
      v.insert(v.end(), series->begin(), series->end());
    }
    CALIB_CHECK(MPI_Send(v.data(), static_cast<int>(v.size()), MPI_DOUBLE, 0, kTag, MPI_COMM_WORLD));
    return;
  }
  for (int r = 1; r < size; ++r) {
    MPI_Status st;
    CALIB_CHECK(MPI_Probe(r, kTag, MPI_COMM_WORLD, &st));
    int n = 0;
    CALIB_CHECK(MPI_Get_count(&st, MPI_DOUBLE, &n));
    std::vector<double> v(static_cast<size_t>(n));
    CALIB_CHECK(MPI_Recv(v.data(), n, MPI_DOUBLE, r, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    RankMeasurement& m = res.ranks[r];
    size_t at = 5;
    if (v.size() < at) throw CalibError("gather_ranks", __FILE__, __LINE__, "short message from rank " + std::to_string(r));
    m.device = static_cast<int>(v[0]);
    int k = 1;
    for (auto* series : {&m.step_s, &m.step_kernel_s, &m.iteration_s, &m.stepped_iteration_s}) {
      const size_t len = static_cast<size_t>(v[k++]);
      if (at + len > v.size()) throw CalibError("gather_ranks", __FILE__, __LINE__, "short message from rank " + std::to_string(r));
      series->assign(v.begin() + at, v.begin() + at + len);
      at += len;
    }
  }
}

struct WorldComm {
  ncclComm_t comm = nullptr;
  ~WorldComm() {
    if (comm) ncclCommDestroy(comm);
  }
};

// main for one process per rank: rank 0 prints and writes (stdout is /dev/null elsewhere).
int run_mpi(Args a) {
  ValidationResult res;
  return guarded([&]() -> int {
    const Place w = place_in_world();
    if (w.rank != 0) a.out.clear(), a.trace.clear(), a.quiet = true;
    ValidationPlan plan;
    std::string why;
    try {
      plan = read_plan_file(a.plan);
    } catch (const InputError& e) {
      why = e.what();
    }
    why = agree(why);  // every rank stops, none waits for the others
    if (!why.empty()) {
      if (w.rank == 0) std::fprintf(stderr, "validate_runner: %s\n", why.c_str());
      return 2;
    }
    start_result(res, plan, a);
    const int world = plan.world_size();
    why = no_gpu_reason();
    if (!why.empty()) why = "no usable GPU: " + why;
    int visible = 0;
    if (why.empty()) CALIB_CHECK(cudaGetDeviceCount(&visible));
    if (why.empty() && world != w.size) {
      why = "the plan has " + std::to_string(world) + " ranks, the launcher started " + std::to_string(w.size) +
            " processes (one per rank)";
    }
    why = agree(why);
    if (!why.empty()) return skipped(a, res, why);
    const int device = w.local % visible;

    setenv("NCCL_RUNTIME_CONNECT", "0", 0);  // as in one process (issue 16, defect 9)
    const char* connect = std::getenv("NCCL_RUNTIME_CONNECT");
    const bool connected_at_init = connect && std::string(connect) == "0";
    CALIB_CHECK(cudaSetDevice(device));
    WorldComm nccl;
    nccl.comm = nccl_world(w);
    Communicators comms(plan, nccl.comm, w.rank);
    std::unique_ptr<RankRunner> me;
    why.clear();
    try {
      me = std::make_unique<RankRunner>(plan, w.rank, device, comms, a.overlap, connected_at_init);
    } catch (const SkipRun& e) {
      why = e.what();
    }
    why = agree(why);
    if (!why.empty()) {
      me.reset();
      return skipped(a, res, why);
    }
    for (int r = 0; r < world; ++r) {
      RankMeasurement m;
      m.rank = r, m.device = r == w.rank ? device : 0;
      m.step_kernel_s.assign(plan.ranks[r].steps.size(), -1);
      res.ranks.push_back(m);
    }
    std::vector<double> step_sum(plan.ranks[w.rank].steps.size(), 0);
    if (!a.quiet) {
      std::printf("# validate_runner: %s / %s on %d GPU%s, %d node%s x %d processes (MPI; %s): %d warm-up + %d timed iterations\n",
                  plan.model.c_str(), plan.scheme.c_str(), world, world == 1 ? "" : "s", w.size / w.per_node,
                  w.size / w.per_node == 1 ? "" : "s", w.per_node, res.device.c_str(), a.warmup, a.iters);
      std::fflush(stdout);
    }
    run_phase_mpi(*me, w.rank, a.warmup, a.warmup, false, step_sum, res);  // warm-up: nothing timed

    const std::string failed = a.graph ? me->capture_graph() : "";
    const std::string graph_why = agree(failed);  // every capture is decided before any rank launches
    const bool use_graph = a.graph && graph_why.empty();
    CALIB_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    res.ranks[w.rank].iteration_s = me->run_iteration_pass(a.iters, use_graph);
    res.iteration_pass = use_graph ? "graph" : "stream";
    if (!a.quiet) {
      if (!graph_why.empty()) std::printf("# no CUDA graph (%s): steps enqueued instead\n", graph_why.c_str());
      std::printf("# iterations timed in the %s pass (no per-step events); step times from a second pass of %d\n",
                  res.iteration_pass.c_str(), a.iters);
      std::fflush(stdout);
    }
    run_phase_mpi(*me, w.rank, a.iters, 0, false, step_sum, res);  // the per-step pass
    for (double s : step_sum) res.ranks[w.rank].step_s.push_back(s / a.iters);

    if (a.cupti_iters > 0) {
      ActivityRecorder& rec = ActivityRecorder::instance();
      rec.correlate_external(true);
      if (!a.trace.empty()) rec.keep_all(true);
      const bool started = rec.start();
      int all = started ? 1 : 0;
      CALIB_CHECK(MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD));
      if (all) {
        run_phase_mpi(*me, w.rank, a.cupti_iters, a.cupti_iters, true, step_sum, res);  // none timed
        std::vector<ActivityRecord> recs = rec.stop();
        attribute_kernels(recs, a.cupti_iters, res);  // this rank's steps
        if (!a.trace.empty()) write_chrome_trace(rec.all(), a.trace);  // rank 0's kernels
      } else {
        if (started) rec.stop();
        res.cupti_iters = 0;
        if (!a.quiet) std::printf("# CUPTI unavailable on some rank, no kernel times: %s\n", rec.init().c_str());
      }
    }
    me.reset();
    gather_ranks(res, w.rank, w.size);
    if (w.rank != 0) return 0;

    return report(plan, res, a);
  });
}
#endif

int run_threads(const Args& a);

}  // namespace

int main(int argc, char** argv) {
  Args a = parse(argc, argv);
#ifdef AUTODDL_WITH_MPI
  if (use_mpi(a.mpi, process_env())) {
    if (mpi_start(&argc, &argv) < 0) return 1;
    const int rc = run_mpi(a);
    if (rc == 1) MPI_Abort(MPI_COMM_WORLD, rc);  // a failed rank must not leave the others waiting
    MPI_Finalize();
    return rc;
  }
#else
  if (a.mpi == "on") {
    ValidationResult res;
    provenance(res, a);
    return skipped(a, res, "built without MPI: --mpi needs the MPI build (libopenmpi-dev at configure time)");
  }
#endif
  return run_threads(a);
}

namespace {

// main for one process, one thread and one GPU per rank.
int run_threads(const Args& a) {
  ValidationResult res;
  return guarded([&]() -> int {
    ValidationPlan plan;
    try {
      plan = read_plan_file(a.plan);
    } catch (const InputError& e) {
      std::fprintf(stderr, "validate_runner: %s\n", e.what());
      return 2;
    }
    start_result(res, plan, a);
    const int world = plan.world_size();
    std::string why = no_gpu_reason();
    if (!why.empty()) return skipped(a, res, "no usable GPU: " + why);
    int visible = 0;
    CALIB_CHECK(cudaGetDeviceCount(&visible));
    if (world > visible) {
      return skipped(a, res, "the plan needs " + std::to_string(world) + " GPUs (one per rank), " +
                                 std::to_string(visible) + " visible");
    }

    // NCCL >= 2.22 connects collectives on first use (NCCL_RUNTIME_CONNECT=1), allocating their
    // buffers mid-run: connect at init instead, unless the user chose, so the memory check sees
    // them (issue 16, defect 9); what stays lazy is estimated by memory_shortfall.
    setenv("NCCL_RUNTIME_CONNECT", "0", 0);
    const char* connect = std::getenv("NCCL_RUNTIME_CONNECT");
    const bool connected_at_init = connect && std::string(connect) == "0";
    Communicators comms(plan);
    std::vector<std::unique_ptr<RankRunner>> ranks;
    try {
      for (int r = 0; r < world; ++r) {
        ranks.push_back(std::make_unique<RankRunner>(plan, r, r, comms, a.overlap, connected_at_init));
      }
    } catch (const SkipRun& e) {
      ranks.clear();
      return skipped(a, res, e.what());
    }
    std::vector<std::vector<double>> step_sum(world);
    for (int r = 0; r < world; ++r) {
      step_sum[r].assign(plan.ranks[r].steps.size(), 0);
      RankMeasurement m;
      m.rank = r, m.device = r;
      m.step_kernel_s.assign(plan.ranks[r].steps.size(), -1);
      res.ranks.push_back(m);
    }
    if (!a.quiet) {
      std::printf("# validate_runner: %s / %s on %d GPU%s (%s): %d warm-up + %d timed iterations\n", plan.model.c_str(),
                  plan.scheme.c_str(), world, world == 1 ? "" : "s", res.device.c_str(), a.warmup, a.iters);
      std::fflush(stdout);
    }
    run_phase(ranks, a.warmup, a.warmup, false, step_sum, res);  // warm-up: nothing timed
    std::string graph_why;
    res.iteration_pass = run_iteration_phase(ranks, a.iters, a.graph, res, graph_why);
    if (!a.quiet) {
      if (!graph_why.empty()) std::printf("# no CUDA graph (%s): steps enqueued instead\n", graph_why.c_str());
      std::printf("# iterations timed in the %s pass (no per-step events); step times from a second pass of %d\n",
                  res.iteration_pass.c_str(), a.iters);
      std::fflush(stdout);
    }
    run_phase(ranks, a.iters, 0, false, step_sum, res);  // the per-step pass
    for (int r = 0; r < world; ++r) {
      for (double s : step_sum[r]) res.ranks[r].step_s.push_back(s / a.iters);
    }

    if (a.cupti_iters > 0) {
      ActivityRecorder& rec = ActivityRecorder::instance();
      rec.correlate_external(true);
      if (!a.trace.empty()) rec.keep_all(true);
      if (rec.start()) {
        run_phase(ranks, a.cupti_iters, a.cupti_iters, true, step_sum, res);  // none timed
        std::vector<ActivityRecord> recs = rec.stop();
        attribute_kernels(recs, a.cupti_iters, res);
        if (!a.trace.empty()) write_chrome_trace(rec.all(), a.trace);
      } else {
        res.cupti_iters = 0;
        if (!a.quiet) std::printf("# CUPTI unavailable, no kernel times: %s\n", rec.init().c_str());
      }
    }
    ranks.clear();

    return report(plan, res, a);
  });
}

}  // namespace
