// Reads NCCL's own debug log back (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING, one file
// per process through NCCL_DEBUG_FILE=<stem>.nccl.%h.%p.log), so that what `autoddl calibrate`
// writes records which algorithm and protocol NCCL chose for every measured size, and the run's
// NCCL version, settings and communicators. Pure C++: no CUDA, no NCCL.
//
// Lines read (prefix "host:pid:tid [dev] NCCL INFO ", optionally after a timestamp; debug.cc):
//   tuning, NCCL 2.24 to 2.30 (src/enqueue.cc, v2.24.3-1 line 678 ... master 5067397 line 822):
//     "<Func>: <bytes> Bytes -> Algo <NAME> proto <NAME> channel{Lo..Hi}={<lo>..<hi>}"
//     bytes = count x type size: for AllGather and ReduceScatter one rank's share (nccl-tests
//     size / ranks), for AllReduce the whole buffer.
//   tuning, NCCL 2.23 (v2.23.4-1 src/enqueue.cc line 1855):
//     "<Func>: <bytes> Bytes -> Algo <id> proto <id> time <us>"
//   tuning, NCCL 2.22 (v2.22.3-1 src/enqueue.cc line 1613), no function name:
//     "<bytes> Bytes -> Algo <id> proto <id> time <us>"
//     2.22/2.23 bytes = type size x ncclFuncMaxSendRecvCount = the nccl-tests size; ids are
//     nccl_common.h's NCCL_ALGO_* (0 tree, 1 ring, 2 collnet_direct, 3 collnet_chain, 4 nvls,
//     5 nvls_tree, 6 pat) and NCCL_PROTO_* (0 LL, 1 LL128, 2 SIMPLE).
//   version (init.cc, INFO(NCCL_ALL)): "NCCL version 2.30.7+cuda13.0"
//   settings (INFO(NCCL_ENV) and others): "NCCL_<NAME> set by environment to <value>"
//   communicator (init.cc): "comm <ptr> rank <r> nRanks <n> nNodes <k> localRanks <l> localRank <i> ..."
//   channels (init.cc): "<c> coll channels, <c> collnet channels, <v> nvls channels, <p> p2p channels, ..."
// NCCL prints tuning lines only on a communicator's rank 0, once per collective call.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace autoddl::calib {

// NCCL's choice for one call. algo in costmodel's names ("ring", "tree", "nvls", "nvls_tree",
// "pat", or "collnet_direct" / "collnet_chain", which costmodel does not model); proto "LL",
// "LL128" or "Simple"; channels = hi - lo + 1 when the line prints the range (NCCL 2.24+), else 0.
struct NcclChoice {
  std::string algo;
  std::string proto;
  int channels = 0;
  friend bool operator==(const NcclChoice&, const NcclChoice&) = default;
};

struct NcclTuningRecord {
  std::string collective;  // "all_reduce", "all_gather", ... ("" when the line names none: 2.22)
  double bytes = 0;        // as printed
  bool per_rank_bytes = false;  // bytes is one rank's share for all_gather/reduce_scatter (2.24+)
  NcclChoice choice;
};

struct NcclCommRecord {
  int ranks = 0, nodes = 0, local_ranks = 0;
  friend bool operator==(const NcclCommRecord&, const NcclCommRecord&) = default;
};

// What a run's logs say about NCCL itself (measurement file key "nccl").
struct NcclRunInfo {
  std::string version;                     // "2.30.7+cuda13.0"; empty if not printed
  std::map<std::string, std::string> env;  // NCCL_* variables NCCL reports as set
  std::vector<NcclCommRecord> comms;       // distinct communicator shapes, as rank 0 printed them
  int coll_channels = 0;                   // largest "coll channels" printed
  int nvls_channels = 0;                   // largest "nvls channels" printed
  std::vector<std::string> logs;           // the files read
  friend bool operator==(const NcclRunInfo&, const NcclRunInfo&) = default;
};

struct NcclDebugLog {
  NcclRunInfo run;
  std::vector<NcclTuningRecord> tuning;
};

// Adds what one line says to `log`; lines it does not know are ignored.
void parse_nccl_debug_line(std::string_view line, NcclDebugLog& log);
// Every line of `text`.
void parse_nccl_debug_text(std::string_view text, NcclDebugLog& log);

// The choice NCCL logged most often (ties: the first seen) for `collective` ("all_reduce", ...)
// at nccl-tests size `size_bytes` over `ranks` ranks; a line without a function name counts for
// any collective. nullopt when no line matches.
std::optional<NcclChoice> nccl_choice_at(const NcclDebugLog& log, std::string_view collective, int ranks,
                                         double size_bytes);

// True for the algorithm and protocol names NcclChoice uses.
bool known_nccl_algo(std::string_view algo);
bool known_nccl_proto(std::string_view proto);

}  // namespace autoddl::calib
