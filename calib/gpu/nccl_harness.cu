// The NCCL collective engine (see nccl_harness.hpp). Per size and placement: fill the send
// region with each rank's chunk values, run once and count elements that differ from the
// expected chunk values (#wrong), then warm up and time with the shared harness. Times are the
// slowest rank's, as in nccl-tests; algbw = S / t, busbw = algbw × bw_factor(n).
//
// MPI builds (AUTODDL_WITH_MPI, calib/gpu/CMakeLists.txt) add the launcher path: with
// --group-ranks, one process per GPU, the NCCL id broadcast over MPI, ncclCommInitRank on the
// world and ncclCommSplit into the groups of the shape; every group runs each size at once,
// the slowest rank's time (MPI_MAX over the world) is the row, and world rank 0 writes it.
#include "nccl_harness.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace autoddl::calib::gpu {

namespace {

constexpr int kMaxChunks = 64;  // the check needs one value per chunk: up to 64 ranks

struct ChunkValues {
  float v[kMaxChunks];
};

__global__ void fill_chunks(float* p, size_t count, int chunks, ChunkValues values) {
  size_t n = count * chunks;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    p[i] = values.v[i / count];
  }
}

__global__ void count_wrong(const float* p, size_t count, int chunks, ChunkValues expect,
                            unsigned long long* wrong) {
  size_t n = count * chunks;
  unsigned long long mine = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    if (p[i] != expect.v[i / count]) ++mine;
  }
  if (mine) atomicAdd(wrong, mine);
}

unsigned blocks_for(size_t n) { return static_cast<unsigned>(std::min<size_t>((n + 255) / 256, 4096)); }

struct Rank {
  int device = 0;
  cudaStream_t stream = nullptr;
  ncclComm_t comm = nullptr;
  float* send = nullptr;
  float* recv = nullptr;
  unsigned long long* wrong = nullptr;
};

ChunkValues values(float (*f)(int, int, int), int r, int n, int chunks) {
  ChunkValues v{};
  for (int j = 0; j < chunks && j < kMaxChunks; ++j) v.v[j] = f(r, n, j);
  return v;
}

std::string nccl_version() {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return "unknown";
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

void run_collective(const Options& opt, Report& report, const CollectiveBench& c) {
  int visible = 0;
  CALIB_CHECK(cudaGetDeviceCount(&visible));
  int n = opt.ngpus > 0 ? std::min(opt.ngpus, visible) : visible;
  std::vector<int> devs(n);
  for (int i = 0; i < n; ++i) devs[i] = i;
  std::vector<Rank> ranks(n);
  std::vector<ncclComm_t> comms(n);
  Row proto;
  proto.name = c.name;
  proto.dtype = "fp32";
  proto.ranks = proto.ranks_per_node = n;
  try {  // no NCCL transport between these GPUs is a skipped row, not an abort
    CALIB_CHECK(ncclCommInitAll(comms.data(), n, devs.data()));
  } catch (const CalibError& e) {
    report.skip(proto, e.what());
    return;
  }
  int send_chunks = c.send_chunks(n), recv_chunks = c.recv_chunks(n);
  int chunks = std::max(send_chunks, recv_chunks);
  bool check = opt.check && chunks <= kMaxChunks;
  if (opt.check && !check) report.note("more than 64 chunks: results not checked");
  size_t max_count = opt.max_bytes / 4 / chunks;
  for (int r = 0; r < n; ++r) {
    Rank& k = ranks[r];
    k.device = devs[r];
    k.comm = comms[r];
    CALIB_CHECK(cudaSetDevice(k.device));
    CALIB_CHECK(cudaStreamCreateWithFlags(&k.stream, cudaStreamNonBlocking));
    CALIB_CHECK(cudaMalloc(&k.send, std::max<size_t>(max_count * send_chunks, 1) * 4));
    CALIB_CHECK(cudaMalloc(&k.recv, std::max<size_t>(max_count * chunks, 1) * 4));
    CALIB_CHECK(cudaMalloc(&k.wrong, sizeof(unsigned long long)));
  }
  std::vector<cudaStream_t> streams;
  for (const Rank& k : ranks) streams.push_back(k.stream);
  Options timing = opt;
  timing.launch = launch_mode(opt, true);
  std::string launch_used;  // said once, and again if a size falls back

  for (size_t bytes : opt.sizes()) {
    size_t count = bytes / 4 / chunks;
    if (count == 0) continue;  // smaller than one element per chunk
    for (bool in_place : {false, true}) {
      std::vector<size_t> send_off(n, 0), recv_off(n, 0);
      if (in_place) {
        bool has = true;
        for (int r = 0; r < n; ++r) has = has && c.in_place(r, n, count, &send_off[r], &recv_off[r]);
        if (!has) continue;
      }
      auto send_ptr = [&](int r) { return in_place ? ranks[r].recv + send_off[r] : ranks[r].send; };
      auto recv_ptr = [&](int r) { return ranks[r].recv + recv_off[r]; };
      auto op = [&] {
        CALIB_CHECK(ncclGroupStart());
        for (int r = 0; r < n; ++r) {
          CALIB_CHECK(c.run(send_ptr(r), recv_ptr(r), count, r, n, ranks[r].comm, ranks[r].stream));
        }
        CALIB_CHECK(ncclGroupEnd());
      };

      Row row = proto;
      row.size_bytes = double(count) * 4 * chunks;
      row.count = static_cast<int64_t>(count);
      row.tags = {{"placement", in_place ? "in-place" : "out-of-place"}, {"redop", c.redop}};
      if (check) {
        for (int r = 0; r < n; ++r) {
          Rank& k = ranks[r];
          CALIB_CHECK(cudaSetDevice(k.device));
          ChunkValues sentinel{};
          for (float& v : sentinel.v) v = -1e30f;
          // Sentinel first, then the send values: in place, the send region lies inside the
          // receive region and overwrites its part, so what the collective leaves unwritten
          // still reads as the sentinel (issue 16, defect 9).
          fill_chunks<<<blocks_for(count * recv_chunks), 256, 0, k.stream>>>(recv_ptr(r), count, recv_chunks, sentinel);
          fill_chunks<<<blocks_for(count * send_chunks), 256, 0, k.stream>>>(
              const_cast<float*>(send_ptr(r)), count, send_chunks, values(c.send_value, r, n, send_chunks));
          CALIB_CHECK(cudaGetLastError());
          CALIB_CHECK(cudaMemsetAsync(k.wrong, 0, sizeof(unsigned long long), k.stream));
        }
        op();
        row.wrong = 0;
        for (int r = 0; r < n; ++r) {
          Rank& k = ranks[r];
          CALIB_CHECK(cudaSetDevice(k.device));
          count_wrong<<<blocks_for(count * recv_chunks), 256, 0, k.stream>>>(
              recv_ptr(r), count, recv_chunks, values(c.expect_value, r, n, recv_chunks), k.wrong);
          CALIB_CHECK(cudaGetLastError());
          unsigned long long w = 0;
          CALIB_CHECK(cudaMemcpyAsync(&w, k.wrong, sizeof w, cudaMemcpyDeviceToHost, k.stream));
          CALIB_CHECK(cudaStreamSynchronize(k.stream));
          row.wrong += static_cast<int64_t>(w);
        }
      }
      Timed t = time_op(timing, devs, streams, op);
      if (t.launch != launch_used) {
        report.note(t.launch == "graph"
                        ? "launch: CUDA graph of the " + std::to_string(opt.iters) +
                              " timed calls per GPU (nccl-tests -G; --launch stream for call-by-call launches)"
                        : "launch: one thread launches every GPU's call in turn" +
                              (t.launch_note.empty() ? std::string(" (--launch stream)")
                                                     : " (no CUDA graph: " + t.launch_note + ")"));
        launch_used = t.launch;
      }
      row.tags.push_back({"launch", t.launch});
      row.time_us = t.time_us;
      row.kernel_us = t.kernel_us;
      row.algbw_GBps = row.size_bytes / 1e3 / t.time_us;
      row.busbw_GBps = row.algbw_GBps * c.bw_factor(n);
      report.add(row);
    }
  }

  for (Rank& k : ranks) {
    CALIB_CHECK(cudaSetDevice(k.device));
    CALIB_CHECK(cudaFree(k.send));
    CALIB_CHECK(cudaFree(k.recv));
    CALIB_CHECK(cudaFree(k.wrong));
    CALIB_CHECK(ncclCommDestroy(k.comm));
    CALIB_CHECK(cudaStreamDestroy(k.stream));
  }
}

#ifdef AUTODDL_WITH_MPI

void run_collective_mpi(const Options& opt, Report& report, const CollectiveBench& c) {
  const Place w = place_in_world();
  const int n = opt.group_ranks, pn = opt.ranks_per_node, k = opt.groups_per_node;
  Row proto;
  proto.name = c.name;
  proto.dtype = "fp32";
  proto.ranks = n;
  proto.ranks_per_node = pn;
  proto.groups_per_node = k;
  if (n % pn != 0 || n / pn > w.size / w.per_node || k * pn > w.per_node) {
    report.skip(proto, "the shape does not fit " + std::to_string(w.size / w.per_node) + " nodes x " +
                           std::to_string(w.per_node) + " ranks");
    return;
  }
  // Groups: the first n / pn nodes, ranks [j·pn, (j+1)·pn) of each node form group j < k.
  const bool member = w.node < n / pn && w.local < k * pn;
  const int color = member ? w.local / pn : NCCL_SPLIT_NOCOLOR;
  const int me = member ? w.node * pn + w.local % pn : 0;  // rank inside the group

  int visible = 0;
  CALIB_CHECK(cudaGetDeviceCount(&visible));
  Rank r;
  r.device = w.local % visible;
  CALIB_CHECK(cudaSetDevice(r.device));
  ncclComm_t world = nccl_world(w);
  CALIB_CHECK(ncclCommSplit(world, color, me, &r.comm, nullptr));

  const int send_chunks = c.send_chunks(n), recv_chunks = c.recv_chunks(n);
  const int chunks = std::max(send_chunks, recv_chunks);
  const bool check = opt.check && chunks <= kMaxChunks;
  if (opt.check && !check) report.note("more than 64 chunks: results not checked");
  const size_t max_count = opt.max_bytes / 4 / chunks;
  if (member) {
    CALIB_CHECK(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking));
    CALIB_CHECK(cudaMalloc(&r.send, std::max<size_t>(max_count * send_chunks, 1) * 4));
    CALIB_CHECK(cudaMalloc(&r.recv, std::max<size_t>(max_count * chunks, 1) * 4));
    CALIB_CHECK(cudaMalloc(&r.wrong, sizeof(unsigned long long)));
  }
  Options timing = opt;
  timing.cupti_iters = 0;  // CUDA-event time only: one process per GPU, no CUPTI pass yet
  timing.launch = launch_mode(opt, false);  // one process per GPU: call by call unless --launch graph

  for (size_t bytes : opt.sizes()) {
    const size_t count = bytes / 4 / chunks;
    if (count == 0) continue;
    for (bool in_place : {false, true}) {
      size_t send_off = 0, recv_off = 0;
      if (in_place) {
        bool has = true;  // every process decides alike, members or not
        for (int g = 0; g < n && has; ++g) {
          size_t so = 0, ro = 0;
          has = c.in_place(g, n, count, &so, &ro);
          if (g == me) send_off = so, recv_off = ro;
        }
        if (!has) continue;
      }
      float* send = in_place ? r.recv + send_off : r.send;
      float* recv = r.recv + recv_off;
      auto op = [&] { CALIB_CHECK(c.run(send, recv, count, me, n, r.comm, r.stream)); };
      Row row = proto;
      row.size_bytes = double(count) * 4 * chunks;
      row.count = static_cast<int64_t>(count);
      row.tags = {{"placement", in_place ? "in-place" : "out-of-place"}, {"redop", c.redop}};
      long long wrong = 0;
      if (member && check) {
        ChunkValues sentinel{};
        for (float& v : sentinel.v) v = -1e30f;
        fill_chunks<<<blocks_for(count * recv_chunks), 256, 0, r.stream>>>(recv, count, recv_chunks, sentinel);
        fill_chunks<<<blocks_for(count * send_chunks), 256, 0, r.stream>>>(send, count, send_chunks,
                                                                          values(c.send_value, me, n, send_chunks));
        CALIB_CHECK(cudaGetLastError());
        CALIB_CHECK(cudaMemsetAsync(r.wrong, 0, sizeof(unsigned long long), r.stream));
        op();
        count_wrong<<<blocks_for(count * recv_chunks), 256, 0, r.stream>>>(recv, count, recv_chunks,
                                                                          values(c.expect_value, me, n, recv_chunks), r.wrong);
        CALIB_CHECK(cudaGetLastError());
        unsigned long long got = 0;
        CALIB_CHECK(cudaMemcpyAsync(&got, r.wrong, sizeof got, cudaMemcpyDeviceToHost, r.stream));
        CALIB_CHECK(cudaStreamSynchronize(r.stream));
        wrong = static_cast<long long>(got);
      }
      // Every group starts the timed loop together, so concurrent groups really share the NICs.
      CALIB_CHECK(MPI_Barrier(MPI_COMM_WORLD));
      double time_us = 0;
      std::string launch = timing.launch;
      if (member) {  // world rank 0 always is: its launch is the row's
        Timed t = time_op(timing, {r.device}, {r.stream}, op);
        time_us = t.time_us;
        launch = t.launch;
        if (!t.launch_note.empty() && w.rank == 0) report.note("no CUDA graph: " + t.launch_note);
      }
      row.tags.push_back({"launch", launch});
      CALIB_CHECK(MPI_Allreduce(MPI_IN_PLACE, &time_us, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
      CALIB_CHECK(MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
      row.time_us = time_us;
      row.algbw_GBps = row.size_bytes / 1e3 / time_us;
      row.busbw_GBps = row.algbw_GBps * c.bw_factor(n);
      if (check) row.wrong = wrong;
      report.add(row);
    }
  }
  if (member) {
    CALIB_CHECK(cudaFree(r.send));
    CALIB_CHECK(cudaFree(r.recv));
    CALIB_CHECK(cudaFree(r.wrong));
    CALIB_CHECK(cudaStreamDestroy(r.stream));
  }
  if (r.comm) CALIB_CHECK(ncclCommDestroy(r.comm));
  CALIB_CHECK(ncclCommDestroy(world));
}
#endif

}  // namespace

#ifdef AUTODDL_WITH_MPI
Place place_in_world() {
  Place p;
  CALIB_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &p.rank));
  CALIB_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &p.size));
  MPI_Comm node;
  CALIB_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, p.rank, MPI_INFO_NULL, &node));
  CALIB_CHECK(MPI_Comm_rank(node, &p.local));
  CALIB_CHECK(MPI_Comm_size(node, &p.per_node));
  CALIB_CHECK(MPI_Comm_free(&node));
  int lo = p.per_node, hi = p.per_node;
  CALIB_CHECK(MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
  CALIB_CHECK(MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
  if (lo != hi || p.rank / p.per_node * p.per_node + p.local != p.rank) {
    throw CalibError("place_in_world", __FILE__, __LINE__,
                     "ranks must fill the nodes in order, the same number per node (got " + std::to_string(lo) + " to " +
                         std::to_string(hi) + " per node)");
  }
  p.node = p.rank / p.per_node;
  return p;
}

int mpi_start(int* argc, char*** argv) {
  MPI_Init(argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0 && !std::freopen("/dev/null", "w", stdout)) return -1;  // rank 0 prints the table
  return rank;
}

ncclComm_t nccl_world(const Place& w) {
  ncclUniqueId id;
  if (w.rank == 0) CALIB_CHECK(ncclGetUniqueId(&id));
  CALIB_CHECK(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD));
  ncclComm_t world = nullptr;
  CALIB_CHECK(ncclCommInitRank(&world, w.size, id, w.rank));
  return world;
}
#endif

std::string nccl_debug_setup(int argc, char** argv) {
  std::string pattern;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--nccl-log") pattern = argv[i + 1];
  }
  if (pattern.empty()) return "";
  if (const char* user = std::getenv("NCCL_DEBUG")) {
    return std::string("# NCCL_DEBUG=") + user + " set by the user, left as it is: NCCL's algorithm/protocol is " +
           "recorded only where its TUNING lines reach " + pattern + " or this output";
  }
  setenv("NCCL_DEBUG", "INFO", 1);
  setenv("NCCL_DEBUG_SUBSYS", "INIT,ENV,TUNING", 0);
  setenv("NCCL_DEBUG_FILE", pattern.c_str(), 0);
  return std::string("# NCCL log: ") + std::getenv("NCCL_DEBUG_FILE") + " (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=" +
         std::getenv("NCCL_DEBUG_SUBSYS") + ")";
}

int nccl_main(int argc, char** argv, const CollectiveBench& c) {
  const std::string nccl_log_note = nccl_debug_setup(argc, argv);  // before NCCL reads its environment
  std::string name = std::string("nccl_") + c.name;
  std::string what = std::string("NCCL ") + c.name + " over all visible GPUs of this process (nccl-tests sizes)";
  BenchInfo info{name.c_str(), what.c_str()};
#ifdef AUTODDL_WITH_MPI
  bool mpi = false;
  for (int i = 1; i < argc; ++i) mpi = mpi || std::string(argv[i]) == "--group-ranks";
  int rank = 0;
  if (mpi) {
    rank = mpi_start(&argc, &argv);
    if (rank < 0) return 1;
  }
  std::vector<char*> args(argv, argv + argc);
  if (rank != 0) {  // only rank 0 writes the JSON: drop --json FILE from the others' arguments
    for (size_t i = 1; i + 1 < args.size(); ++i) {
      if (std::string(args[i]) == "--json") args.erase(args.begin() + i, args.begin() + i + 2);
    }
  }
  int rc = run_main(static_cast<int>(args.size()), args.data(), info, [&](const Options& opt, Report& report) {
    if (!nccl_log_note.empty()) std::printf("%s\n", nccl_log_note.c_str());
    report.version("nccl", nccl_version());
    if (opt.group_ranks > 0) {
      run_collective_mpi(opt, report, c);
    } else {
      run_collective(opt, report, c);
    }
  });
  if (mpi) {
    if (rc != 0) MPI_Abort(MPI_COMM_WORLD, rc);  // a failed rank must not leave the others waiting
    MPI_Finalize();
  }
  return rc;
#else
  return run_main(argc, argv, info, [&](const Options& opt, Report& report) {
    if (!nccl_log_note.empty()) std::printf("%s\n", nccl_log_note.c_str());
    report.version("nccl", nccl_version());
    if (opt.group_ranks > 0) {
      Row row;
      row.name = c.name;
      row.dtype = "fp32";
      row.ranks = opt.group_ranks;
      row.ranks_per_node = opt.ranks_per_node;
      row.groups_per_node = opt.groups_per_node;
      report.skip(row, "built without MPI: --group-ranks needs the MPI build (libopenmpi-dev at configure time)");
      return;
    }
    run_collective(opt, report, c);
  });
#endif
}

}  // namespace autoddl::calib::gpu
