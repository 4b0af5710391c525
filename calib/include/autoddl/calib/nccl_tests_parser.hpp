// Reader for the standard stdout of NVIDIA nccl-tests (`all_reduce_perf`, `all_gather_perf`,
// `reduce_scatter_perf`, `alltoall_perf`, `sendrecv_perf`; src/util.cu's writeResultHeader and
// writeBenchmarkLine*), so a user who already ran nccl-tests can calibrate without our binaries.
// A file may hold several runs (each starts at its "# nThread ..." line). The collective comes
// from the "# Collective test starting: <program>" line, else from the caller, else from the
// file name; the rank count and ranks per node from the "#  Rank ... on <host> device ..." lines,
// else from the caller (for tables copied without their header), else from "# nThread" (one process).
// NCCL_DEBUG lines ("host:pid:tid [dev] NCCL INFO ...") are skipped; any other line that is not
// a '#' line or a well-formed result row is an InputError(file, "line N", reason).
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "autoddl/costmodel/collective.hpp"

namespace autoddl::calib {

struct NcclTestsTiming {
  double time_us = 0;  // mean time per operation ("time", or "cputime" with -C)
  double algbw_GBps = 0;
  double busbw_GBps = 0;
  std::optional<double> wrong;  // "#wrong"; empty when nccl-tests printed N/A (-c 0)
};

struct NcclTestsRow {
  int line = 0;
  double size_bytes = 0;
  int64_t count = 0;
  std::string type;   // "float", "half", "bfloat16", ...
  std::string redop;  // "sum", or "none" for collectives without a reduction
  int root = -1;
  NcclTestsTiming out_of_place;
  NcclTestsTiming in_place;
};

struct NcclTestsRun {
  std::string file;
  int first_line = 0;        // the run's "# nThread" (or column header) line
  std::string program;       // "all_reduce_perf", when the log names it
  costmodel::CollectiveKind kind = costmodel::CollectiveKind::all_reduce;
  int threads = 0;           // from "# nThread"; 0 when absent
  int gpus_per_thread = 0;
  costmodel::CommGroup group;            // ranks of one collective, ranks per node (host)
  // Groups of a split run (NCCL_TESTS_SPLIT) with ranks on one node, for groups that cross
  // nodes (they share its NICs); 1 inside a node, where groups are priced apart (mesh.cpp).
  int groups_per_node = 1;
  std::vector<std::string> device_names; // one per rank line, e.g. "NVIDIA H100 80GB HBM3"
  bool cpu_time = false;                 // "cputime" columns (-C 1): host time, not GPU time
  std::vector<NcclTestsRow> rows;
  std::optional<int64_t> out_of_bounds;  // footer "# Out of bounds values : N OK|FAILED"
  std::optional<double> avg_busbw_GBps;  // footer "# Avg bus bandwidth : X"
};

// Parses one log. `collective`, when given, names the collective of every run (and must agree
// with the log if the log names its program). Checks busbw/algbw against the collective's busbw
// factor (costmodel::collective_info(kind).bw_factor(ranks)), which catches a wrong collective
// or rank count. `group`, when given, is the ranks and ranks per node of every run: it is what a
// log without "#  Rank" lines (a table pasted from its column header on) cannot say, and it must
// agree with the rank lines of a log that has them. One process per GPU (`mpirun -np 8 ... -g 1`)
// prints "# nThread 1 nGpus 1" per process, so without rank lines `group` also overrides nThread.
// Throws InputError(file, "line N", reason).
std::vector<NcclTestsRun> parse_nccl_tests(std::string_view text, const std::string& file,
                                           std::optional<costmodel::CollectiveKind> collective = {},
                                           std::optional<costmodel::CommGroup> group = {});
std::vector<NcclTestsRun> load_nccl_tests_file(const std::string& path,
                                               std::optional<costmodel::CollectiveKind> collective = {},
                                               std::optional<costmodel::CommGroup> group = {});

// The collective of an nccl-tests program name ("./build/all_reduce_perf_mpi" -> all_reduce);
// nullptr if it is not one autoddl models.
const costmodel::CollectiveInfo* collective_of_nccl_tests_program(std::string_view program);

}  // namespace autoddl::calib
