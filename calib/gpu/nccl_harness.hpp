// The collective engine of the nccl_<coll> programs (nccl-tests' testColl + testEngine): one
// process drives every visible GPU (ncclCommInitAll; one GPU = world size 1), sweeps nccl-tests
// sizes, times out-of-place and in-place runs, and checks results (#wrong). A collective file
// fills one CollectiveBench: chunk counts, the values each rank sends and expects, the in-place
// layout and the NCCL call; it prints nothing. Data is fp32, the reduction is sum.
#pragma once
#include <nccl.h>

#include "harness.hpp"

#ifdef AUTODDL_WITH_MPI
#include <mpi.h>
#endif

namespace autoddl::calib::gpu {

template <>
struct Status<ncclResult_t> {
  static bool ok(ncclResult_t r) { return r == ncclSuccess; }
  static std::string text(ncclResult_t r) {
    std::string s = ncclGetErrorString(r);
    const char* last = ncclGetLastError(nullptr);
    if (last && *last) s += ": " + std::string(last);
    return s;
  }
};

struct CollectiveBench {
  const char* name;            // "all_reduce": row name, = autoddl's collective name
  const char* redop;           // "sum" or "none"
  double (*bw_factor)(int n);  // nccl-tests busbw factor: costmodel/collective_factors.hpp
  // Each rank's send and receive buffers are `chunks` blocks of `count` elements; the
  // nccl-tests size S is count · 4 B · max(send_chunks, recv_chunks).
  int (*send_chunks)(int n);
  int (*recv_chunks)(int n);
  // Value of every element of chunk j that rank r sends, and that it must receive.
  float (*send_value)(int r, int n, int j);
  float (*expect_value)(int r, int n, int j);
  // In place: element offsets of the send and receive regions inside one buffer; false if the
  // collective has no in-place form.
  bool (*in_place)(int r, int n, size_t count, size_t* send_offset, size_t* recv_offset);
  ncclResult_t (*run)(const float* send, float* recv, size_t count, int r, int n, ncclComm_t comm,
                      cudaStream_t stream);
};

int nccl_main(int argc, char** argv, const CollectiveBench& c);

// With --nccl-log PATTERN among the arguments and NCCL_DEBUG unset: NCCL_DEBUG=INFO,
// NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING and NCCL_DEBUG_FILE=PATTERN (each only where the user has not
// set it), before NCCL reads its environment, so that NCCL's version, settings, communicators and
// per-call algorithm/protocol choice land in one file per process for `autoddl calibrate` to read
// back (calib/include/autoddl/calib/nccl_debug_log.hpp). A user's own NCCL_DEBUG is left as it is.
// Returns the "# ..." line the table starts with ("" without --nccl-log).
std::string nccl_debug_setup(int argc, char** argv);

#ifdef AUTODDL_WITH_MPI
// The launcher path's MPI helpers (MPI builds only), shared by nccl_main and validate_runner.
template <>
struct Status<int> {  // MPI error codes
  static bool ok(int e) { return e == MPI_SUCCESS; }
  static std::string text(int e) {
    char buf[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(e, buf, &len);
    return std::string(buf, len);
  }
};

// Where this process sits: world rank, node (ranks are placed node by node, as srun and mpirun
// --map-by node... block do by default), rank on the node. Throws unless the ranks fill the
// nodes in order, the same number per node.
struct Place {
  int rank = 0, size = 1, node = 0, local = 0, per_node = 1;
};
Place place_in_world();

// MPI_Init; every rank but 0 sends stdout to /dev/null (rank 0 prints the table). Returns
// the world rank.
int mpi_start(int* argc, char*** argv);

// The world communicator of NCCL over every MPI rank (rank 0's id broadcast over MPI).
ncclComm_t nccl_world(const Place& w);
#endif

}  // namespace autoddl::calib::gpu
