// NCCL's model (costmodel/cluster/src/nccl_model.cpp) against numbers worked out by hand from NCCL's
// search.cc / tuning.cc constants on the dgx-a100 and dgx-h100 presets, and the cluster JSON's
// `nccl` block checks.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/collective.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/nccl_model.hpp"

using namespace autoddl::costmodel;
using K = CollectiveKind;

namespace {
NcclTuning one_node(const char* preset, int ranks = 8) {
  return nccl_tuning(resolve_cluster(preset), {ranks, ranks, 8.0 * ranks / 8});
}
double busbw(const NcclTuning& t, K kind, double bytes, NcclEstimate e) {
  return busbw_GBps(kind, t.ranks, bytes, e.time_s);
}
}  // namespace

TEST_CASE("channel graphs: the speeds NCCL's search settles on for DGX A100 and H100", "[costmodel][nccl]") {
  // A100: 12 NVLink3 x 20 GB/s = 240; 6 channels at 40 GB/s, duplicated to 12 x 20.
  NcclTuning a100 = one_node("dgx-a100");
  CHECK(a100.ring.channels == 12);
  CHECK(a100.ring.bw_intra_GBps == Approx(20));
  // H100: 18 x 20.6 = 370.8; 6 x 60 = 360 is the best product, duplicated to 12 x 30.
  NcclTuning h100 = one_node("dgx-h100");
  CHECK(h100.ring.channels == 12);
  CHECK(h100.ring.bw_intra_GBps == Approx(30));
  // NVLS: 8 heads; 8 x 50 <= 370.8 x 8/7, inter speed raised to 60 (< 2 x 50).
  CHECK(h100.nvls.channels == 8);
  CHECK(h100.nvls.bw_intra_GBps == Approx(50));
  CHECK(h100.nvls.bw_inter_GBps == Approx(60));
  CHECK(a100.nvls.channels == 0);  // no NVLink SHARP on Ampere
  // Across nodes, one 50 GB/s NDR NIC per GPU: 8 channels at 45 GB/s (8 x 48 exceeds 370.8).
  NcclTuning h100x2 = nccl_tuning(resolve_cluster("dgx-h100", 2), {16, 8, 8});
  CHECK(h100x2.ring.channels == 8);
  CHECK(h100x2.ring.bw_inter_GBps == Approx(45));
  // The communicator runs twice the graph's channels (connect.cc): 24 on one DGX A100, as the
  // "Channel 00/24" lines of an HGX A100's NCCL log show (NVIDIA/nccl-tests issue 100); on two
  // H100 nodes 16 (no second doubling: the graph's intra speed, 45, is not above 45).
  CHECK(a100.channels == 24);
  CHECK(h100.channels == 24);
  CHECK(h100x2.channels == 16);
}

TEST_CASE("a ring launched on fewer than the graph's channels slows by graph / launched", "[costmodel][nccl]") {
  // Simple ring: channels launched drop while bytes < channels x 512 threads x 64 B (enqueue.cc).
  NcclTuning a100 = one_node("dgx-a100");
  REQUIRE(a100.ring.channels == 12);
  auto at = [&](double bytes) { return nccl_time(a100, K::all_reduce, bytes, NcclAlgo::ring, NcclProto::simple); };
  const double lat_s = a100.lat_us[0][int(NcclAlgo::ring)][int(NcclProto::simple)] * 1e-6;
  const double bw = a100.bw_GBps[0][int(NcclAlgo::ring)][int(NcclProto::simple)] * 1e9;
  // 256 KiB launches 8 channels: 8 of the graph's 12 carry the bandwidth, 12/8 slower.
  const NcclEstimate small = at(256 << 10);
  CHECK(small.channels == 8);
  CHECK(small.time_s == Approx(lat_s + (256 << 10) * 12.0 / 8 / bw));
  // 640 KiB launches 20 of the communicator's 24: every graph channel runs, the tuner's time holds.
  const NcclEstimate mid = at(640 << 10);
  CHECK(mid.channels == 20);
  CHECK(mid.time_s == Approx(lat_s + (640 << 10) / bw));
}

TEST_CASE("large all-reduce busbw plateaus where NCCL's model puts it", "[costmodel][nccl]") {
  const double big = 8.0 * (1 << 30);
  NcclTuning h100 = one_node("dgx-h100");
  NcclEstimate e = nccl_time(h100, K::all_reduce, big);
  CHECK(e.algo == NcclAlgo::nvls);
  CHECK(e.proto == NcclProto::simple);
  // NVLS: min(50 x 0.85 x 7/8 x 2, 60) x 8 channels = 480 GB/s busbw (sjeaugey, nccl-tests #212).
  CHECK(busbw(h100, K::all_reduce, big, e) == Approx(480).epsilon(0.005));
  NcclEstimate ring = nccl_time(h100, K::all_reduce, big, NcclAlgo::ring, NcclProto::simple);
  CHECK(busbw(h100, K::all_reduce, big, ring) == Approx(360).epsilon(0.005));
  NcclTuning a100 = one_node("dgx-a100");
  NcclEstimate ea = nccl_time(a100, K::all_reduce, big);
  CHECK(ea.algo == NcclAlgo::ring);
  CHECK(busbw(a100, K::all_reduce, big, ea) == Approx(240).epsilon(0.005));
}

TEST_CASE("small messages take LL, mid sizes LL128, large Simple, latency by hand", "[costmodel][nccl]") {
  NcclTuning a100 = one_node("dgx-a100");
  // 8 B all-reduce, ring LL: 6.6 + 14 x 0.6 = 15.0 us; tree LL: 6.8 + 2 x 7 x 0.6 = 15.2 us.
  NcclEstimate tiny = nccl_time(a100, K::all_reduce, 8);
  CHECK(tiny.algo == NcclAlgo::ring);
  CHECK(tiny.proto == NcclProto::ll);
  CHECK(tiny.time_s == Approx(15.0e-6).epsilon(0.01));
  CHECK(nccl_time(a100, K::all_reduce, 8 << 20).proto == NcclProto::ll128);
  CHECK(nccl_time(a100, K::all_reduce, 512 << 20).proto == NcclProto::simple);
  // LL128 is off without NVLink; the channel ramp launches fewer channels for small Simple runs.
  CHECK(nccl_time(a100, K::reduce_scatter, 64 << 10, NcclAlgo::ring, NcclProto::simple).channels < a100.channels);
}

TEST_CASE("across nodes tree wins mid sizes, ring the largest, NVLS-tree on Hopper", "[costmodel][nccl]") {
  NcclTuning a100x4 = nccl_tuning(resolve_cluster("dgx-a100", 4), {32, 8, 8});
  CHECK(nccl_time(a100x4, K::all_reduce, 1 << 20).algo == NcclAlgo::tree);
  CHECK(nccl_time(a100x4, K::all_reduce, 4.0 * (1 << 30)).algo == NcclAlgo::ring);
  NcclTuning h100x2 = nccl_tuning(resolve_cluster("dgx-h100", 2), {16, 8, 8});
  CHECK(nccl_time(h100x2, K::all_reduce, 4.0 * (1 << 30)).algo == NcclAlgo::nvls_tree);
  // One GPU per node: PAT serves all-gather, and NVLS does not apply.
  NcclTuning rail = nccl_tuning(resolve_cluster("dgx-h100", 4), {4, 1, 1});
  CHECK(rail.bw_GBps[1][int(NcclAlgo::pat)][int(NcclProto::simple)] > 0);
  CHECK(rail.bw_GBps[0][int(NcclAlgo::nvls)][int(NcclProto::simple)] == 0);
  // p2p kinds are not NCCL-tuned collectives.
  CHECK(nccl_time(a100x4, K::send_recv, 1 << 20).time_s < 0);
}

TEST_CASE("the nccl block is checked and round-trips", "[costmodel][nccl][cluster]") {
  ClusterSpec h100 = resolve_cluster("dgx-h100");
  REQUIRE(h100.nccl);
  nlohmann::json j = cluster_to_json(h100);
  CHECK(cluster_from_json(j, "x.json") == h100);
  nlohmann::json bad = j;
  bad["nccl"]["arch"] = "pascal";
  CHECK_THROWS_WITH(cluster_from_json(bad, "x.json"), Catch::Contains("nccl.arch"));
  bad = j;
  bad["nccl"]["arch"] = "ampere";
  CHECK_THROWS_WITH(cluster_from_json(bad, "x.json"), Catch::Contains("NVLink SHARP needs a Hopper"));
  bad = j;
  bad["nccl"]["speed"] = 1;
  CHECK_THROWS_WITH(cluster_from_json(bad, "x.json"), Catch::Contains("nccl.speed: unknown key"));
  // Without the block, nccl_collective_time is the α-β collective_time.
  ClusterSpec plain = h100;
  plain.nccl.reset();
  CommGroup g{8, 8};
  CHECK(nccl_collective_time(plain, K::all_reduce, g, 1 << 20).time_s ==
        collective_time(plain, K::all_reduce, g, 1 << 20).time_s);
  CHECK(nccl_collective_time(h100, K::all_reduce, g, 1 << 20).protocol == "LL");
}

TEST_CASE("the nccl block's nvlink_bw_GBps is 0 or a physical link speed", "[costmodel][nccl][cluster]") {
  nlohmann::json j = cluster_to_json(resolve_cluster("dgx-a100"));
  for (double bad : {1e-100, 0.5, -1.0, 2e5}) {
    CAPTURE(bad);
    j["nccl"]["nvlink_bw_GBps"] = bad;
    CHECK_THROWS_WITH(cluster_from_json(j, "x.json"),
                      Catch::Contains("nccl.nvlink_bw_GBps: must be 0 (PCIe only) or in [1, 1e+05]"));
  }
  for (double good : {0.0, 1.0, 1e5}) {
    j["nccl"]["nvlink_bw_GBps"] = good;
    CHECK(cluster_from_json(j, "x.json").nccl->nvlink_bw_GBps == good);
  }
}

TEST_CASE("NCCL's model prices every collective at the loader's bounds on links and NICs", "[costmodel][nccl]") {
  // Links slower than every speed of NCCL's arrays take NCCL's one-channel fallback graph; it
  // must carry data across nodes too (a NIC of 1e3 B/s on 4 nodes had no algorithm: abort).
  for (const char* arch : {"volta", "ampere", "hopper", "blackwell"}) {
    for (double nvlink_GBps : {0.0, 1.0, 1e5}) {
      for (double nic_bytes_per_s : {1e3, 1e16}) {
        ClusterSpec c = resolve_cluster("dgx-h100", 4);
        c.nccl->arch = arch;
        c.nccl->nvlink_bw_GBps = nvlink_GBps;
        c.nccl->nvls = nvlink_GBps > 0 && std::string(arch) != "volta" && std::string(arch) != "ampere";
        c.inter.nic_bw_bytes_per_s = nic_bytes_per_s;
        for (CommGroup g : {CommGroup{8, 8}, CommGroup{16, 8}, CommGroup{32, 8}, CommGroup{4, 1}}) {
          for (K kind : {K::all_reduce, K::all_gather, K::reduce_scatter}) {
            CAPTURE(arch, nvlink_GBps, nic_bytes_per_s, g.ranks, g.ranks_per_node, collective_info(kind).name);
            const NcclEstimate e = nccl_time(nccl_tuning(c, {g.ranks, g.ranks_per_node, 1.0}), kind, 1 << 20);
            CHECK(e.time_s > 0);
            CHECK(std::isfinite(e.time_s));
          }
        }
      }
    }
  }
}

TEST_CASE("NVLS moves data in chunk rounds, and NCCL still chooses by its tuner", "[costmodel][nccl]") {
  NcclTuning h100 = one_node("dgx-h100");
  REQUIRE(h100.nvls_channels == 16);
  REQUIRE(h100.chunk_lat_us == Approx(4.0));  // hwLat[NVLink][tree][Simple]
  // 8 MiB all-reduce on 16 channels x 8 heads = 128 ops: the chunk drops from 128 KiB to 32 KiB
  // (8 MiB < 8 x 128 x 64 KiB), so 2 rounds plus one to fill. Tuner algbw 480 x 8/14 GB/s: a
  // 128 KiB round takes 128 x 128 KiB / 274.29 GB/s = 61.17 us, a 32 KiB one
  // (61.17 - 4) / 4 + 4 = 18.29 us; time 25 + 3 x 18.29 = 79.9 us (the tuner alone: 55.6 us).
  const double mib8 = 8 << 20;
  NcclEstimate e = nccl_time(h100, K::all_reduce, mib8, NcclAlgo::nvls, NcclProto::simple);
  CHECK(e.time_s == Approx(79.88e-6).epsilon(0.002));
  // 2 MiB: NCCL's tuner times NVLS at 25 + 7.6 = 32.6 us against ring/LL's 41.0 us and picks
  // NVLS (nccl-tests#309 shows NCCL choosing it from 2 MB); its kernel takes
  // 25 + 2 x (61.17 - 4) / 8 + 2 x 4 = 47.3 us, slower than the ring would have been.
  const double mib2 = 2 << 20;
  NcclEstimate pick = nccl_time(h100, K::all_reduce, mib2);
  CHECK(pick.algo == NcclAlgo::nvls);
  CHECK(pick.time_s == Approx(47.29e-6).epsilon(0.002));
  CHECK(nccl_time(h100, K::all_reduce, mib2, NcclAlgo::ring, NcclProto::ll).time_s < pick.time_s);
  // Large sizes: 128 KiB chunks, the tuner's rate plus one round of fill.
  const double gib8 = 8.0 * (1 << 30);
  NcclEstimate big = nccl_time(h100, K::all_reduce, gib8);
  CHECK(big.time_s == Approx(25e-6 + gib8 / 274.2857e9 + 61.17e-6).epsilon(0.001));
}

TEST_CASE("NCCL_ALGO / NCCL_PROTO restrict the choice, which NCCL still makes by its tuner's time", "[costmodel][nccl]") {
  CHECK(parse_nccl_algo("Ring") == NcclAlgo::ring);
  CHECK(parse_nccl_algo("NVLSTree") == NcclAlgo::nvls_tree);
  CHECK(parse_nccl_algo("nvls_tree") == NcclAlgo::nvls_tree);
  CHECK(parse_nccl_algo("CollnetDirect") == std::nullopt);  // not modelled
  CHECK(parse_nccl_proto("simple") == NcclProto::simple);
  CHECK(parse_nccl_proto("LL128") == NcclProto::ll128);
  CHECK(parse_nccl_proto("LL64") == std::nullopt);

  NcclTuning h100 = one_node("dgx-h100");
  const double bytes = 8 << 20;
  // Unrestricted, 8 MiB on one H100 node is NVLS; with NCCL_ALGO=Ring the tuner takes LL128.
  CHECK(nccl_choice(h100, K::all_reduce, bytes, {std::nullopt, std::nullopt}).algo == NcclAlgo::nvls);
  const NcclEstimate ring = nccl_choice(h100, K::all_reduce, bytes, {NcclAlgo::ring, std::nullopt});
  CHECK(ring.algo == NcclAlgo::ring);
  CHECK(ring.proto == NcclProto::ll128);
  CHECK(ring.time_s == nccl_time(h100, K::all_reduce, bytes, NcclAlgo::ring, NcclProto::ll128).time_s);
  // NCCL_PROTO=LL alone: the fastest algorithm with LL (NVLS has only Simple).
  const NcclEstimate ll = nccl_choice(h100, K::all_reduce, bytes, {std::nullopt, NcclProto::ll});
  CHECK(ll.proto == NcclProto::ll);
  CHECK(ll.algo != NcclAlgo::nvls);
  // Nothing allowed is available: NVLS on Ampere, tree for all-gather.
  CHECK(nccl_choice(one_node("dgx-a100"), K::all_reduce, bytes, {NcclAlgo::nvls, std::nullopt}).time_s < 0);
  CHECK(nccl_choice(h100, K::all_gather, bytes, {NcclAlgo::tree, std::nullopt}).time_s < 0);
}

TEST_CASE("an NVL72 rack is one 72-GPU NVLink domain with NVLS on 32 heads and Blackwell constants", "[costmodel][nccl]") {
  // gb200-nvl72: 18 NVLink5 links x SM100_NVLINK_BW 40.1 = 721.8 GB/s per GPU. NVLS heads are
  // capped at NCCL_MAX_NVLS_ARITY = 32 (search.cc); 32 x s <= 721.8 x 72/71 = 732 gives s = 20
  // (SM100 intra speeds ... 24, 20 ...), the inter speed is raised to 30 (the fastest below 40).
  const NcclTuning t = nccl_tuning(resolve_cluster("gb200-nvl72"), {72, 72, 72});
  CHECK(t.arch == 3);
  CHECK(t.nodes == 1);
  CHECK(t.nvls.channels == 32);
  CHECK(t.nvls.bw_intra_GBps == Approx(20));
  CHECK(t.nvls.bw_inter_GBps == Approx(30));
  // Large all-reduce: NVLS. The tuner's busbw is min(20 x 0.74 (Blackwell's NVLS efficiency) x
  // 31/32 x 2, 30) x 32 channels = 917.6 GB/s (algbw x 2·71/72); the kernel adds one round of
  // fill (24 launched channels x 32 heads x 128 KiB), 1.2% at 8 GiB.
  const double tuner_busbw = 20 * 0.74 * 31.0 / 32 * 2 * 32;
  CHECK(t.bw_GBps[0][int(NcclAlgo::nvls)][int(NcclProto::simple)] * 2 * 71.0 / 72 == Approx(tuner_busbw).epsilon(1e-5));
  CHECK(t.nvls_channels == 24);
  const double big = 8.0 * (1 << 30);
  const NcclEstimate e = nccl_time(t, K::all_reduce, big);
  CHECK(e.algo == NcclAlgo::nvls);
  const double fill_s = 24 * 32 * 128.0 * 1024 / (tuner_busbw * 72 / 142 * 1e9);
  const double lat_s = t.lat_us[0][int(NcclAlgo::nvls)][int(NcclProto::simple)] * 1e-6;
  CHECK(e.time_s == Approx(lat_s + big / (tuner_busbw * 72 / 142 * 1e9) + fill_s).epsilon(0.002));
  // The same 72 ranks on DGX B200 nodes leave NVLink after 8 GPUs: the network caps the ring.
  const NcclTuning b200 = nccl_tuning(resolve_cluster("dgx-b200", 9), {72, 9, 8});
  const NcclEstimate eb = nccl_time(b200, K::all_reduce, big);
  CHECK(busbw(b200, K::all_reduce, big, eb) < 0.5 * busbw(t, K::all_reduce, big, e));
  // Grace is an Arm CPU: NCCL tells only AMD apart, so gb200-nvl72 across racks takes the Intel rows.
  CHECK(resolve_cluster("gb200-nvl72").nccl->cpu_vendor == "arm");
}
