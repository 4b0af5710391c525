// nccl-tests stdout import: the synthetic sample logs in tests/calib/data/ and inline fragments.
#include <catch2/catch.hpp>

#include "autoddl/calib/nccl_tests_parser.hpp"
#include "autoddl/costmodel/error.hpp"

using namespace autoddl::calib;
using autoddl::InputError;
using autoddl::costmodel::CollectiveKind;

namespace {

std::string data(const std::string& name) {
  return std::string(AUTODDL_SOURCE_DIR) + "/tests/calib/data/" + name;
}

// A one-process, 2-GPU all_reduce log; line 7 is the first result row.
const char* kHeader =
    "# Collective test starting: all_reduce_perf\n"                                        // 1
    "# nThread 1 nGpus 2 minBytes 8 maxBytes 64 step: 2(factor) warmup iters: 5 iters: 20\n"  // 2
    "#  Rank  0 Group  0 Pid   4242 on     box device  0 [0000:18:00] NVIDIA H200\n"       // 3
    "#  Rank  1 Group  0 Pid   4242 on     box device  1 [0000:2a:00] NVIDIA H200\n"       // 4
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"  // 5
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n";       // 6

std::string expect_error(const std::string& text, std::optional<CollectiveKind> kind = {}) {
  try {
    parse_nccl_tests(text, "log.txt", kind);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("an all_reduce_perf log parses with its program, ranks, rows and footer",
          "[calib][nccl-tests]") {
  auto runs = load_nccl_tests_file(data("all_reduce_perf_8xH100.txt"));
  REQUIRE(runs.size() == 1);
  const NcclTestsRun& r = runs[0];
  CHECK(r.program == "all_reduce_perf");
  CHECK(r.kind == CollectiveKind::all_reduce);
  CHECK(r.threads == 1);
  CHECK(r.gpus_per_thread == 8);
  CHECK(r.group.ranks == 8);
  CHECK(r.group.ranks_per_node == 8);
  REQUIRE(r.device_names.size() == 8);
  CHECK(r.device_names[0] == "NVIDIA H100 80GB HBM3");
  REQUIRE(r.rows.size() == 31);  // 8 B .. 8 GiB
  const NcclTestsRow& first = r.rows.front();
  CHECK(first.size_bytes == 8);
  CHECK(first.count == 2);
  CHECK(first.type == "float");
  CHECK(first.redop == "sum");
  CHECK(first.root == -1);
  CHECK(first.out_of_place.time_us == 13.80);
  CHECK(first.in_place.time_us == 14.20);
  CHECK(first.out_of_place.wrong == 0.0);
  const NcclTestsRow& last = r.rows.back();
  CHECK(last.size_bytes == 8589934592.0);
  CHECK(last.out_of_place.time_us == 45869.2);  // printed with one decimal at this size
  CHECK(last.out_of_place.algbw_GBps == 187.27);
  CHECK(last.out_of_place.busbw_GBps == 327.72);
  CHECK(last.in_place.time_us == 46567.8);
  CHECK(r.out_of_bounds == 0);
  CHECK(r.avg_busbw_GBps == 110.383);
}

TEST_CASE("an old-format all_gather log takes its collective from the file name and its ranks "
          "per node from the hosts", "[calib][nccl-tests]") {
  auto runs = load_nccl_tests_file(data("all_gather_perf_2x8_mpi.txt"));
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].program.empty());
  CHECK(runs[0].kind == CollectiveKind::all_gather);
  CHECK(runs[0].group.ranks == 16);
  CHECK(runs[0].group.ranks_per_node == 8);
  CHECK(runs[0].group.nodes() == 2);
  CHECK(runs[0].rows.front().redop == "none");
  CHECK(runs[0].device_names[15] == "NVIDIA H100 80GB HBM3");
}

TEST_CASE("#wrong values are kept per column, and a failed check shows in the footer",
          "[calib][nccl-tests]") {
  auto runs = load_nccl_tests_file(data("reduce_scatter_perf_4gpu.txt"));
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].program == "./build/reduce_scatter_perf");
  CHECK(runs[0].kind == CollectiveKind::reduce_scatter);
  CHECK(runs[0].group.ranks == 4);
  int failed = 0;
  for (const NcclTestsRow& row : runs[0].rows) {
    if (row.out_of_place.wrong != 0.0) {
      ++failed;
      CHECK(row.size_bytes == 1 << 20);
      CHECK(row.out_of_place.wrong == 3.0);
      CHECK(row.in_place.wrong == 0.0);
    }
  }
  CHECK(failed == 1);
  CHECK(runs[0].out_of_bounds == 3);
}

TEST_CASE("#wrong printed as N/A (-c 0) parses as no check", "[calib][nccl-tests]") {
  auto runs = load_nccl_tests_file(data("alltoall_perf_8gpu_nocheck.txt"));
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].kind == CollectiveKind::all_to_all);
  for (const NcclTestsRow& row : runs[0].rows) {
    CHECK_FALSE(row.out_of_place.wrong.has_value());
    CHECK_FALSE(row.in_place.wrong.has_value());
  }
}

TEST_CASE("sendrecv_perf_mpi is send_recv with busbw equal to algbw", "[calib][nccl-tests]") {
  auto runs = load_nccl_tests_file(data("sendrecv_perf_2gpu.txt"));
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].kind == CollectiveKind::send_recv);
  CHECK(runs[0].group.ranks == 2);
  CHECK(runs[0].rows.back().type == "bfloat16");
}

TEST_CASE("two runs in one file parse as two runs", "[calib][nccl-tests]") {
  std::string text = std::string(kHeader) +
                     "           8             2     float     sum      -1    10.00    0.00    0.00      0    10.00    0.00    0.00      0\n" +
                     "# Collective test starting: all_gather_perf\n" + "# nThread 1 nGpus 2 minBytes 8\n" +
                     "#  Rank  0 Group  0 Pid   4242 on     box device  0 [0000:18:00] NVIDIA H200\n"
                     "#  Rank  1 Group  0 Pid   4242 on     box device  1 [0000:2a:00] NVIDIA H200\n" +
                     "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
                     "          16             2     float    none      -1    10.00    0.00    0.00      0    10.00    0.00    0.00      0\n";
  auto runs = parse_nccl_tests(text, "two.txt");
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].kind == CollectiveKind::all_reduce);
  CHECK(runs[1].kind == CollectiveKind::all_gather);
  CHECK(runs[1].rows.size() == 1);
}

TEST_CASE("per-iteration timing columns (-I) are accepted", "[calib][nccl-tests]") {
  std::string text =
      "# Collective test starting: all_reduce_perf\n"
      "# nThread 1 nGpus 1 minBytes 8\n"
      "#  Rank  0 Group  0 Pid   4242 on     box device  0 [0000:18:00] NVIDIA H200\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong   i_min   i_max   i_p99   i_cv%     time   algbw   busbw #wrong   i_min   i_max   i_p99   i_cv%\n"
      "     1048576        262144     float     sum      -1    20.00   52.43    0.00      0   19.50   21.00   20.90    1.20    21.00   49.93    0.00      0   20.10   22.00   21.80    1.40\n";
  auto runs = parse_nccl_tests(text, "periter.txt");
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].rows[0].in_place.time_us == 21.0);
  CHECK(runs[0].rows[0].in_place.algbw_GBps == 49.93);
}

TEST_CASE("a result row with a missing column names the file and line", "[calib][nccl-tests]") {
  std::string text = std::string(kHeader) +
                     "           8             2     float     sum      -1    10.00    0.00    0.00      0    10.00    0.00    0.00\n";
  CHECK(expect_error(text) == "log.txt: line 7: expected 13 columns, found 12");
}

TEST_CASE("a non-numeric time names the file, line and value", "[calib][nccl-tests]") {
  std::string text = std::string(kHeader) +
                     "           8             2     float     sum      -1    10.00    0.00    0.00      0    10.00    0.00    0.00      0\n"
                     "          16             4     float     sum      -1     fast    0.00    0.00      0    10.00    0.00    0.00      0\n";
  CHECK(expect_error(text) == "log.txt: line 8: bad time 'fast'");
}

TEST_CASE("a stray line in the table is an error at its line", "[calib][nccl-tests]") {
  std::string text = std::string(kHeader) + "box: Test NCCL failure common.cu:1079 'unhandled cuda error'\n";
  CHECK(expect_error(text) ==
        "log.txt: line 7: not an nccl-tests line: 'box: Test NCCL failure common.cu:1079 'unhandled cuda error''");
}

TEST_CASE("a result row before the column header is an error", "[calib][nccl-tests]") {
  std::string text = "# nThread 1 nGpus 1 minBytes 8\n"
                     "           8             2     float     sum      -1    10.00    0.00    0.00      0    10.00    0.00    0.00      0\n";
  CHECK(expect_error(text) == "log.txt: line 2: result row before the column header ('# size count ...')");
}

TEST_CASE("a log without result rows is an error at its run's first line", "[calib][nccl-tests]") {
  CHECK(expect_error(kHeader) == "log.txt: line 2: run has no result rows");
  CHECK(expect_error("") == "log.txt: no nccl-tests results found");
}

TEST_CASE("a collective named by the caller must agree with the log's program",
          "[calib][nccl-tests]") {
  std::string text = std::string(kHeader) +
                     "           8             2     float     sum      -1    10.00    0.00    0.00      0    10.00    0.00    0.00      0\n";
  CHECK(expect_error(text, CollectiveKind::all_gather) ==
        "log.txt: line 2: the log is from all_reduce_perf but the collective was given as all_gather");
}

TEST_CASE("busbw that does not match the collective's factor is caught", "[calib][nccl-tests]") {
  // all_reduce over 2 ranks has factor 1; this row's busbw is 1.75 x algbw (8 ranks).
  std::string text = std::string(kHeader).substr(std::string(kHeader).find('\n') + 1) +
                     "     1048576        262144     float     sum      -1    20.00   52.43   91.75      0    20.00   52.43   91.75      0\n";
  CHECK(expect_error(text, CollectiveKind::all_reduce) ==
        "log.txt: line 6: busbw 91.75 is not algbw 52.43 x 1, the busbw factor of all_reduce over "
        "2 ranks: wrong collective or rank count?");
}

TEST_CASE("a log that names no collective anywhere asks for one", "[calib][nccl-tests]") {
  std::string text = std::string(kHeader).substr(std::string(kHeader).find('\n') + 1) +
                     "           8             2     float     sum      -1    10.00    0.00    0.00      0    10.00    0.00    0.00      0\n";
  CHECK(expect_error(text).find("log.txt: line 1: cannot tell which collective") == 0);
  CHECK(parse_nccl_tests(text, "log.txt", CollectiveKind::all_reduce)[0].group.ranks == 2);
}

TEST_CASE("a program autoddl does not model is rejected", "[calib][nccl-tests]") {
  std::string text = "# Collective test starting: broadcast_perf\n" +
                     std::string(kHeader).substr(std::string(kHeader).find('\n') + 1) +
                     "           8             2     float     sum       0    10.00    0.00    0.00      0    10.00    0.00    0.00      0\n";
  CHECK(expect_error(text) == "log.txt: line 2: 'broadcast_perf' is not a collective autoddl models");
}

TEST_CASE("nccl-tests program names map to collectives", "[calib][nccl-tests]") {
  CHECK(collective_of_nccl_tests_program("alltoall_perf")->kind == CollectiveKind::all_to_all);
  CHECK(collective_of_nccl_tests_program("/opt/nccl-tests/build/all_reduce_perf_mpi")->kind ==
        CollectiveKind::all_reduce);
  CHECK(collective_of_nccl_tests_program("hypercube_perf") == nullptr);
}

// A table pasted from its column header on (no "# nThread", no "#  Rank" lines): the caller gives
// the ranks and ranks per node, and the busbw factor checks them.
TEST_CASE("a table without rank lines takes its ranks from the caller, checked by busbw", "[calib][nccl-tests]") {
  const std::string columns = std::string(kHeader).substr(std::string(kHeader).find("#       size"));
  const std::string text =
      columns + "     1048576        262144     float     sum      -1    20.00   52.43   91.75      0    20.00   52.43   91.75      0\n";
  CHECK(expect_error(text, CollectiveKind::all_reduce).find("log.txt: line 1: cannot tell the number of ranks") == 0);
  const auto runs = parse_nccl_tests(text, "log.txt", CollectiveKind::all_reduce, autoddl::costmodel::CommGroup{8, 8});
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].group.ranks == 8);
  CHECK(runs[0].group.ranks_per_node == 8);
  CHECK(runs[0].rows.size() == 1);
  // 16 ranks would make busbw 1.875 x algbw, not the log's 1.75.
  try {
    parse_nccl_tests(text, "log.txt", CollectiveKind::all_reduce, autoddl::costmodel::CommGroup{16, 8});
    FAIL("16 ranks accepted");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("over 16 ranks: wrong collective or rank count?") != std::string::npos);
  }
}

// One process per GPU prints "# nThread 1 nGpus 1" in each process; without rank lines the
// caller's ranks win over that one-rank reading.
TEST_CASE("ranks given by the caller override nThread x nGpus when there are no rank lines", "[calib][nccl-tests]") {
  const std::string text =
      "# nThread 1 nGpus 1 minBytes 8 maxBytes 64 step: 2(factor) warmup iters: 5 iters: 20\n" +
      std::string(kHeader).substr(std::string(kHeader).find("#       size")) +
      "     1048576        262144     float     sum      -1    20.00   52.43   91.75      0    20.00   52.43   91.75      0\n";
  CHECK(parse_nccl_tests(text, "log.txt", CollectiveKind::all_reduce, autoddl::costmodel::CommGroup{8, 8})[0].group.ranks == 8);
}

TEST_CASE("ranks given by the caller must agree with the log's rank lines", "[calib][nccl-tests]") {
  const std::string text =
      std::string(kHeader) + "     1048576        262144     float     sum      -1    20.00   52.43   52.43      0    20.00   52.43   52.43      0\n";
  CHECK(parse_nccl_tests(text, "log.txt", {}, autoddl::costmodel::CommGroup{2, 2})[0].group.ranks == 2);
  CHECK(expect_error(text, std::nullopt) == "no error");
  try {
    parse_nccl_tests(text, "log.txt", {}, autoddl::costmodel::CommGroup{2, 1});
    FAIL("a disagreeing group accepted");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) ==
          "log.txt: line 2: the log's '#  Rank' lines show 2 ranks, 2 per node, but 2 ranks, 1 per node were given");
  }
  try {
    parse_nccl_tests(text, "log.txt", {}, autoddl::costmodel::CommGroup{3, 2});
    FAIL("3 ranks of 2 per node accepted");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("must be >= 1 and a multiple of the ranks per node") != std::string::npos);
  }
}
