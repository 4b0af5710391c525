// The NCCL collective engine (see nccl_harness.hpp). Per size and placement: fill the send
// region with each rank's chunk values, run once and count elements that differ from the
// expected chunk values (#wrong), then warm up and time with the shared harness. Times are the
// slowest rank's, as in nccl-tests; algbw = S / t, busbw = algbw × bw_factor(n).
#include "nccl_harness.hpp"

#include <algorithm>

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
          if (!in_place) fill_chunks<<<blocks_for(count * recv_chunks), 256, 0, k.stream>>>(recv_ptr(r), count, recv_chunks, sentinel);
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
      Timed t = time_op(opt, devs, streams, op);
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

}  // namespace

int nccl_main(int argc, char** argv, const CollectiveBench& c) {
  std::string name = std::string("nccl_") + c.name;
  std::string what = std::string("NCCL ") + c.name + " over all visible GPUs of this process (nccl-tests sizes)";
  BenchInfo info{name.c_str(), what.c_str()};
  return run_main(argc, argv, info, [&](const Options& opt, Report& report) {
    report.version("nccl", nccl_version());
    run_collective(opt, report, c);
  });
}

}  // namespace autoddl::calib::gpu
