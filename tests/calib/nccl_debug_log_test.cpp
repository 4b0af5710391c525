// NCCL's debug log read back (issue 16: record NCCL's chosen algorithm and protocol), on lines in
// the formats of NCCL 2.30.7 / 2.24+, 2.23.4 and 2.22.3 (tests/calib/data/nccl_debug/README.md
// cites the source lines), and attached to measurement rows.
#include <catch2/catch.hpp>

#include "autoddl/calib/measurements.hpp"
#include "autoddl/calib/nccl_debug_log.hpp"
#include "autoddl/costmodel/io.hpp"

using namespace autoddl::calib;

namespace {

NcclDebugLog read_log(const std::string& name) {
  NcclDebugLog log;
  parse_nccl_debug_text(autoddl::read_text_file(std::string(AUTODDL_SOURCE_DIR) + "/tests/calib/data/nccl_debug/" + name),
                        log);
  return log;
}

}  // namespace

TEST_CASE("NCCL 2.30 logs give version, settings, communicators, channels and per-size choices",
          "[calib][nccl_log]") {
  const NcclDebugLog log = read_log("nccl_2.30.7_all_reduce_2x8.log");
  CHECK(log.run.version == "2.30.7+cuda13.0");
  CHECK(log.run.env == std::map<std::string, std::string>{{"NCCL_IB_HCA", "mlx5_0,mlx5_3"}, {"NCCL_SOCKET_IFNAME", "ib0"}});
  REQUIRE(log.run.comms.size() == 1);
  CHECK(log.run.comms[0] == NcclCommRecord{16, 2, 8});
  CHECK(log.run.coll_channels == 32);
  CHECK(log.run.nvls_channels == 16);
  REQUIRE(log.tuning.size() == 6);  // the symmetric-kernel line and the WARN are not tuning lines
  CHECK(log.tuning[0].collective == "all_reduce");
  CHECK(log.tuning[0].per_rank_bytes);

  CHECK(nccl_choice_at(log, "all_reduce", 16, 1024) == NcclChoice{"tree", "LL", 1});
  // Two calls chose tree/LL128, one ring/LL128: the most frequent one is recorded.
  CHECK(nccl_choice_at(log, "all_reduce", 16, 1 << 20) == NcclChoice{"tree", "LL128", 16});
  CHECK(nccl_choice_at(log, "all_reduce", 16, 1 << 30) == NcclChoice{"nvls_tree", "Simple", 16});
  CHECK_FALSE(nccl_choice_at(log, "all_reduce", 16, 2048));
  CHECK_FALSE(nccl_choice_at(log, "all_gather", 16, 1024));  // the lines name AllReduce
}

TEST_CASE("from NCCL 2.24 on, all-gather and reduce-scatter bytes are one rank's share", "[calib][nccl_log]") {
  const NcclDebugLog log = read_log("nccl_2.30.7_all_gather_1x8.log");
  CHECK(log.run.version == "2.30.7+cuda12.9");
  // 131072 B per rank x 8 ranks = the nccl-tests size 1 MiB.
  CHECK(nccl_choice_at(log, "all_gather", 8, 1 << 20) == NcclChoice{"ring", "LL128", 8});
  CHECK(nccl_choice_at(log, "all_gather", 8, 1 << 30) == NcclChoice{"nvls", "Simple", 16});
  CHECK(nccl_choice_at(log, "reduce_scatter", 8, 1 << 20) == NcclChoice{"ring", "LL", 4});
  CHECK_FALSE(nccl_choice_at(log, "all_gather", 8, 131072));
}

TEST_CASE("NCCL 2.23 prints algorithm and protocol ids and the nccl-tests size", "[calib][nccl_log]") {
  const NcclDebugLog log = read_log("nccl_2.23.4_all_gather_4x1.log");
  CHECK(log.run.version == "2.23.4+cuda12.6");
  CHECK(log.run.comms == std::vector<NcclCommRecord>{{4, 4, 1}});
  CHECK(nccl_choice_at(log, "all_gather", 4, 4096) == NcclChoice{"ring", "LL", 0});
  CHECK(nccl_choice_at(log, "all_gather", 4, 4 << 20) == NcclChoice{"pat", "Simple", 0});
}

TEST_CASE("NCCL 2.22 lines without a function name count for the program's collective", "[calib][nccl_log]") {
  const NcclDebugLog log = read_log("nccl_2.22.3_all_reduce_1x8.log");
  REQUIRE(log.tuning.size() == 2);
  CHECK(log.tuning[0].collective.empty());
  CHECK(nccl_choice_at(log, "all_reduce", 8, 65536) == NcclChoice{"ring", "LL", 0});
  CHECK(nccl_choice_at(log, "all_reduce", 8, 64 << 20) == NcclChoice{"nvls", "Simple", 0});
}

TEST_CASE("lines that are not NCCL's tuning format are ignored", "[calib][nccl_log]") {
  NcclDebugLog log;
  parse_nccl_debug_text(
      "#       size  count\n"
      "h:1:1 [0] NCCL INFO AllReduce: 64 Bytes -> Algo WARP proto LL channel{Lo..Hi}={0..0}\n"   // unknown algorithm
      "h:1:1 [0] NCCL INFO AllReduce: x Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}\n"    // no byte count
      "h:1:1 [0] NCCL INFO Frobnicate: 64 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}\n"  // unknown function
      "h:1:1 [0] NCCL INFO 64 Bytes -> Algo 9 proto 0 time 1.0\n"                                 // id out of range
      "h:1:1 [0] NCCL INFO comm 0x1 rank 3 nRanks 8 nNodes 1 localRanks 8 localRank 3 MNNVL 0\n"  // not rank 0
      "AllReduce: 64 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}\n",                        // no NCCL prefix
      log);
  CHECK(log.tuning.empty());
  CHECK(log.run.comms.empty());
}

TEST_CASE("attaching a log gives each measured collective row its choice and the file the run's NCCL info",
          "[calib][nccl_log]") {
  MeasurementFile m;
  m.benchmark = "nccl_all_reduce";
  for (double bytes : {1024.0, 2048.0, double(1 << 30)}) {
    MeasurementRow r;
    r.name = "all_reduce";
    r.size_bytes = bytes;
    r.ranks = 16;
    r.ranks_per_node = 8;
    r.time_us = 10;
    m.rows.push_back(r);
  }
  MeasurementRow gemm;
  gemm.name = "gemm";
  gemm.size_bytes = 1024;
  gemm.time_us = 5;
  m.rows.push_back(gemm);
  const NcclDebugLog log = read_log("nccl_2.30.7_all_reduce_2x8.log");
  CHECK(attach_nccl_log(m, log, {"run.nccl.gpu-a01.81234.log"}) == 2);
  CHECK(m.rows[0].nccl == NcclChoice{"tree", "LL", 1});
  CHECK_FALSE(m.rows[1].nccl);  // 2048 B was not logged
  CHECK(m.rows[2].nccl == NcclChoice{"nvls_tree", "Simple", 16});
  CHECK_FALSE(m.rows[3].nccl);
  REQUIRE(m.nccl);
  CHECK(m.nccl->version == "2.30.7+cuda13.0");
  CHECK(m.nccl->logs == std::vector<std::string>{"run.nccl.gpu-a01.81234.log"});
}
