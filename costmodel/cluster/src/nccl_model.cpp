// NCCL's cost model, transcribed from NCCL's sources (github.com/NVIDIA/nccl, master of
// 2026-06-11, commit 5067397; reference/calibration.md 3.2 lists the v2.21.5 differences).
// Units inside are NCCL's: microseconds and GB/s (1e9 B/s); time_us = lat + bytes / (1000·bw).
//
// 1. Channel graphs (src/graph/search.cc, ncclTopoCompute). NCCL searches, from the fastest
//    per-channel speed of its speed arrays down, for the most channels × speed the GPU's links
//    carry. We solve the same problem in closed form on the cluster's totals: per GPU the NVLink
//    bandwidth B (cluster nccl.nvlink_bw_GBps = links × topo.h's SM80/SM90_NVLINK_BW) or the
//    PCIe bandwidth, per node the NICs' speed N (inter.nic_bw_bytes_per_s / 1e9, as NCCL reads
//    the port rate) times the NICs the communicator may use.
//    ring, one node:   speed s from the intra array maximizing min(32, ⌊B/s⌋)·s (first wins);
//    ring, n > 1:      s from the inter array with s <= N, channels min(32, ⌊B/s⌋, nics·⌊N/s⌋);
//    no speed fits:    one channel at min(B, N) both inside and across nodes (NCCL's fallback);
//    then ncclTopoDupChannels: s >= 25 and not (sm > 80, s < 50, channels > 4) → channels ×2,
//    s ÷2; then "pass 2" raises s while channels·s fits. Tree uses the ring's channels.
//    nvls (Hopper+ with NVLink SHARP): channels = GPUs of the node (heads: min(GPUs, NICs)
//    across nodes; at most NCCL_MAX_NVLS_ARITY = 32, device.h), intra speed the largest with channels·s <= B·g/(g−1), inter speed raised
//    to the largest array speed below 2× intra (one node) or the NIC-limited speed (n > 1).
//    The communicator then runs twice the ring graph's channels (src/graph/connect.cc,
//    ncclTopoPostset: "Duplication should be complete now", nChannels × 2, at most MAXCHANNELS
//    = 64), and on Hopper and newer across nodes twice again while it has fewer than 16 and the
//    graph's intra speed is above 45 ("4 compute channels per search channel"). The tuner still
//    prices the graph's channels (busBw below); the launched kernel (item 4) and the ring plateau
//    test (item 3) count the communicator's.
// 2. Tuning (src/graph/tuning.cc, ncclTopoTuneModel), per collective, algorithm, protocol:
//    busBw = channels·bw (bw = graph intra speed if nodes <= 2, else inter speed);
//    NVLS: bw = min(intra·eff·(c−1)/c·(AR ? 2 : (ppn−1)/ppn), inter·(NVLS-tree, <= 2 nodes ? 2 : 1),
//          NVLS-tree per-channel cap) with eff 0.85 (Hopper) / 0.74 (Blackwell);
//    ring LL: min(llMaxBw, busBw/2); ring LL128: min(0.92·busBw, c·perChMaxRingLL128);
//    tree AR: min(0.92·busBw, c·perChMaxTree); tree LL ÷3.8 (capped llMaxBw); tree LL128
//    ×7/9 (1 node) or ×120/128, capped c·perChMaxTreeLL128; PAT ×0.75;
//    algorithm bandwidth = busBw·ranks/nsteps (ring, NVLS, NVLS-tree; nsteps AR 2(p−1), AG/RS
//    p−1) or busBw/2 (tree AR); NVLS and PAT all-gather/reduce-scatter keep busBw.
//    Latency: base[a][p] +
//      ring   (nsteps − interSteps)·max(intraLat, netOverhead) + interSteps·interLat,
//             interSteps = AR 2(n−1), AG/RS n−1; netOverhead 1 us (Intel) / 2 us (AMD), ×3 Simple
//      tree   2·((ppn−1)·intraLat + log2(n)·interLat)
//      nvls   intraLat (+ interLat on > 1 node)      nvls_tree  intraLat + 2·log2(n)·interLat
//      pat    log2(n)·interLat/3.5 + 2.8·ranks
//    with intraLat = hwLat[NVLink or PCI][a][p], interLat = hwLat[NET][a or tree if ppn = 1][p].
//    Availability: NVLS only on one node (across nodes it needs CollNet, which no preset has);
//    NVLS-tree only across nodes; PAT only for all-gather/reduce-scatter with 1 GPU per node;
//    LL128 only with NVLink inside the node; tree only for all-reduce.
// 3. Time (ncclTopoGetAlgoTime): tree AR bandwidth × treeCorrectionFactor[p][log2(bytes/64)]
//    for bytes < 512 MiB; multi-node ring/Simple AR latency ×1.4 (×1.9 before Ampere) once
//    bytes/(channels·ranks) >= 64 ("plateau effect"). NCCL picks the smallest time.
// 4. Channels launched (src/enqueue.cc): ring and tree drop channels from the communicator's
//    while bytes < channels·threads·threshold (threads 512 LL / 640 LL128 / 512 Simple;
//    threshold 8·ranks ring-LL, 8 LL128, 64 Simple); NCCL's tuner times the full channel count,
//    but the launched kernel moves data on fewer channels. A graph channel carries the search's
//    per-channel speed (item 1), which the duplicated channels share; so our time scales the
//    bandwidth term by graph channels/launched once fewer than the graph's channels run. NVLS launches its 16 (Hopper) / 24-32 (Blackwell) NVLS channels.
// 5. NVLS and NVLS-tree move data in rounds (src/enqueue.cc): each of ops = launched channels ×
//    heads concurrent operations moves one chunk per round, and the chunk shrinks for smaller
//    sizes: NVLS from NCCL_NVLS_CHUNKSIZE (128 KiB) to 64 KiB below 64·ops·chunk, 32 KiB below
//    8·ops·chunk, 16 KiB below 2·ops·chunk; NVLS-tree from min(128 KiB, treeMaxChunkSize: 64 KiB
//    from 4 nodes, transport/nvls.cc) to 256/128/64/32 KiB below 32/16/4/1·ops·chunk. The tuner
//    prices every size at the largest chunk's rate; the kernel pays per round a chunk latency τ,
//    NCCL's hwLat[NVLink][tree][Simple] (4 us: the constant tuning.cc itself adds per chunk step
//    for reduce/broadcast, "waiting for proper chunk modeling"), and one more round to fill the
//    pipeline. Keeping the tuner's bandwidth at the largest chunk c_max:
//      round(c) = ops·c·(round(c_max) − τ)/(ops·c_max) + τ,  round(c_max) = ops·c_max/bw,
//      time = lat + (bytes/(ops·c) + 1)·round(c).
//    On 8 H100 this turns the tuner's +20% to +49% (busbw, 2 to 64 MiB) into −11% to +8%
//    (tests/calib/nccl_model_vs_nccl_tests_test.cpp). NCCL still chooses by its tuner's time
//    (item 3), and so do we: items 4 and 5 change the time of the choice, not the choice.
// Not modelled: CollNet (SHARP switches), the "simpler tree" fallback (×0.85), GPUs of mixed
// compute capability, NCCL_ALGO/NCCL_PROTO overrides other than through nccl_time(a, p).
#include "autoddl/costmodel/nccl_model.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>
#include <string>

#include "autoddl/costmodel/error.hpp"

namespace autoddl::costmodel {
namespace {

constexpr int kTree = 0, kRing = 1, kNvls = 2, kNvlsTree = 3, kPat = 4;
constexpr int kLL = 0, kLL128 = 1, kSimple = 2;
constexpr int kHwNvlink = 0, kHwPci = 1, kHwNet = 2;

// tuning.cc, ncclTunerConstantsDefaults (rows: tree, ring, nvls, nvls_tree, pat).
constexpr float kBaseLat[kNcclAlgoCount][kNcclProtoCount] = {
    {6.8f, 14.0f, 8.4f}, {6.6f, 14.0f, 8.4f}, {0, 0, 0}, {0, 0, 0}, {8.0f, 8.0f, 8.0f}};
constexpr float kHwLat[3][kNcclAlgoCount][kNcclProtoCount] = {
    {{0.6f, 1.25f, 4.0f}, {0.6f, 1.9f, 3.4f}, {0, 0, 25}, {0, 0, 25}, {0, 0, 4.0f}},       // NVLink
    {{1.0f, 1.9f, 4.0f}, {1.0f, 2.5f, 5.7f}, {0, 0, 0}, {0, 0, 0}, {0, 0, 4.0f}},          // PCI
    {{5.0f, 8.5f, 14}, {2.7f, 4.0f, 14.0f}, {0, 0, 18}, {0, 0, 20.9f}, {0, 0, 14}}};       // NET
// [arch or CPU row][nodes 1 / 2 / >= 4] (arch rows Volta, Ampere, Hopper, Blackwell).
constexpr double kLlMaxBw[4][3] = {
    {39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};
constexpr double kPerChMaxRingLL128[4][3] = {
    {20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 36.7}, {40, 40, 40}};
constexpr double kPerChMaxTreeLL128[4][3] = {
    {20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
constexpr double kPerChMaxTree[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};
constexpr double kPerChMaxNvlsTree[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}};
constexpr double kNvlsEfficiency[4] = {0, 0, 0.85, 0.74};
// tuning.cc treeCorrectionFactor[proto][log2(bytes / 64)], 64 B to 256 MiB.
constexpr float kTreeCorrection[kNcclProtoCount][24] = {
    {1.0f, 1.0f, 1.0f, 1.0f, .9f, .8f, .7f, .7f, .7f, .7f, .6f, .5f, .4f, .4f, .5f, .6f, .7f, .8f, .9f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f},
    {1.0f, 1.0f, 1.0f, 1.0f, 1.0f, .9f, .8f, .8f, .8f, .7f, .6f, .6f, .6f, .6f, .6f, .6f, .8f, .9f, .9f, .9f, .9f, 1.0f, 1.0f, 1.0f},
    {.9f, .9f, .9f, .9f, .9f, .9f, .9f, .8f, .7f, .6f, .6f, .5f, .5f, .5f, .5f, .6f, .7f, .8f, .7f, .7f, .8f, .9f, .9f, .9f}};

// search.cc speed arrays (GB/s per channel), fastest first.
constexpr double kSpeedIntra[] = {40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0};
constexpr double kSpeedInter[] = {48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                  7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};
constexpr double kSm90SpeedIntra[] = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0};
constexpr double kSm90SpeedInter[] = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                      15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
constexpr double kSm100SpeedIntra[] = {90.0, 80.0, 70.0, 60.0, 50.0, 45.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0};
constexpr double kSm100SpeedInter[] = {96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0,
                                       20.0, 17.5, 15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};

struct Speeds {
  const double* v;
  int n;
};
Speeds speeds(int arch, bool inter) {
  if (arch >= 3) return inter ? Speeds{kSm100SpeedInter, int(std::size(kSm100SpeedInter))}
                              : Speeds{kSm100SpeedIntra, int(std::size(kSm100SpeedIntra))};
  if (arch == 2) return inter ? Speeds{kSm90SpeedInter, int(std::size(kSm90SpeedInter))}
                              : Speeds{kSm90SpeedIntra, int(std::size(kSm90SpeedIntra))};
  return inter ? Speeds{kSpeedInter, int(std::size(kSpeedInter))}
               : Speeds{kSpeedIntra, int(std::size(kSpeedIntra))};
}

constexpr int kMaxChannels = 64;                    // device.h MAXCHANNELS
constexpr int kMaxRingChannels = kMaxChannels / 2;  // init.cc: ringGraph->maxChannels = MAXCHANNELS / 2
constexpr double kPciGen4BwGBps = 24.0;  // used when the node has no NVLink

int arch_index(const std::string& arch) {
  if (arch == "volta") return 0;
  if (arch == "ampere") return 1;
  if (arch == "hopper") return 2;
  return 3;  // blackwell (the loader accepts only these four)
}

int log2i(long long n) {
  int l = 0;
  while (n >>= 1) ++l;
  return l;
}

// Channels a speed sustains: per GPU `gpu_bw`, and over the network `nics` NICs of `nic_bw`.
int channels_at(double s, double gpu_bw, bool net, double nics, double nic_bw) {
  int c = std::min(kMaxRingChannels, int(std::floor(gpu_bw / s + 1e-9)));
  if (net) {
    if (s > nic_bw + 1e-9) return 0;
    const double per_nic = std::floor(nic_bw / s + 1e-9);
    c = std::min(c, int(std::floor(std::max(nics, 1.0) * per_nic + 1e-9)));
  }
  return c;
}

// ncclTopoCompute for the ring pattern, in closed form (see the header comment, item 1).
NcclGraph ring_graph(int arch, double gpu_bw, bool net, double nics, double nic_bw) {
  const Speeds sp = speeds(arch, net);
  NcclGraph g;
  double best = 0;
  for (int i = 0; i < sp.n; ++i) {
    const int c = channels_at(sp.v[i], gpu_bw, net, nics, nic_bw);
    if (c >= 1 && c * sp.v[i] > best + 1e-9) {
      best = c * sp.v[i];
      g = {c, sp.v[i], sp.v[i]};
    }
  }
  // No speed fits (links slower than the slowest array speed): NCCL falls back to one channel
  // with the same speed inside and across nodes (search.cc, "falling back to simple order");
  // we keep the links' own speed for it. A zero inter speed left no algorithm beyond 2 nodes.
  if (g.channels == 0) {
    const double s = std::min(gpu_bw, net ? nic_bw : gpu_bw);
    return {1, s, s};
  }
  // ncclTopoDupChannels.
  const double s = g.bw_intra_GBps;
  if (s >= 25.0 && !(arch >= 2 && s < 50.0 && g.channels > 4)) {
    const int dup = std::min(g.channels * 2, kMaxRingChannels);
    const int div = (dup + g.channels - 1) / g.channels;
    g = {dup, s / div, s / div};
  }
  // Pass 2: a faster speed at the same channel count, if the links carry it.
  for (int i = sp.n - 1; i >= 0; --i) {
    const double faster = sp.v[i];
    if (faster <= g.bw_intra_GBps) continue;
    if (g.channels * faster <= gpu_bw + 1e-9 &&
        (!net || (faster <= nic_bw + 1e-9 && g.channels * faster <= std::max(nics, 1.0) * nic_bw + 1e-9))) {
      g.bw_intra_GBps = g.bw_inter_GBps = faster;
    } else {
      break;
    }
  }
  return g;
}

// ncclTopoCompute for the NVLS pattern (header comment, item 1).
NcclGraph nvls_graph(int arch, int gpus, double gpu_bw, bool net, double nics, double nic_bw) {
  NcclGraph g;
  // At most NCCL_MAX_NVLS_ARITY (device.h: 32) heads: search.cc caps the NVLS graph's channels at
  // min(32, GPUs), which only an NVLink domain larger than 32 GPUs (NVL72) reaches.
  constexpr int kMaxNvlsArity = 32;
  const int heads = std::min(kMaxNvlsArity, net ? std::min(gpus, std::max(1, int(std::floor(nics + 1e-9)))) : gpus);
  if (heads < 2 && !net) return g;
  const double budget = gpus > 1 ? gpu_bw * gpus / (gpus - 1.0) : gpu_bw;
  const Speeds sp = speeds(arch, net);
  int i = 0;
  while (i < sp.n - 1 && (heads * sp.v[i] > budget + 1e-9 || (net && sp.v[i] > nic_bw + 1e-9))) ++i;
  g.channels = heads;
  g.bw_intra_GBps = g.bw_inter_GBps = sp.v[i];
  if (!net) {
    // Pass 2 raises the inter speed while it stays below twice the intra speed.
    for (int k = 0; k < i; ++k) {
      if (sp.v[k] < 2 * g.bw_intra_GBps) {
        g.bw_inter_GBps = sp.v[k];
        break;
      }
    }
  }
  return g;
}

int kind_row(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::all_reduce: return 0;
    case CollectiveKind::all_gather: return 1;
    case CollectiveKind::reduce_scatter: return 2;
    default: return -1;
  }
}

}  // namespace

std::string_view nccl_algo_name(NcclAlgo a) {
  constexpr std::string_view names[] = {"tree", "ring", "nvls", "nvls_tree", "pat"};
  return names[int(a)];
}

std::string_view nccl_proto_name(NcclProto p) {
  constexpr std::string_view names[] = {"LL", "LL128", "Simple"};
  return names[int(p)];
}

NcclTuning nccl_tuning(const ClusterSpec& c, const NcclComm& comm) {
  AUTODDL_CHECK(c.nccl.has_value()) << "cluster " << c.name << " has no nccl block";
  const NcclSpec& spec = *c.nccl;
  NcclTuning t;
  t.arch = arch_index(spec.arch);
  t.ranks = std::max(comm.ranks, 1);
  const int ppn = std::clamp(comm.ranks_per_node, 1, t.ranks);
  t.nodes = (t.ranks + ppn - 1) / ppn;
  if (t.ranks <= 1) return t;
  const bool net = t.nodes > 1;
  const bool nvlink = spec.nvlink_bw_GBps > 0;
  const double gpu_bw = nvlink ? spec.nvlink_bw_GBps : kPciGen4BwGBps;
  const double nic_bw = c.inter.nic_bw_bytes_per_s / 1e9;
  t.ring = ring_graph(t.arch, gpu_bw, net, comm.nics, nic_bw);
  // A fractional NIC share (more groups than NICs) slows each channel proportionally.
  if (net && comm.nics < 1) {
    t.ring.bw_inter_GBps *= comm.nics;
    t.ring.bw_intra_GBps = std::min(t.ring.bw_intra_GBps, t.ring.bw_inter_GBps);
  }
  t.channels = std::min(kMaxChannels, 2 * t.ring.channels);  // item 1: connect.cc's duplication
  if (t.arch >= 2 && net && t.ring.bw_intra_GBps > 45.0 && t.channels < 16) t.channels = std::min(kMaxChannels, 2 * t.channels);
  const bool nvls_ok = spec.nvls && nvlink && ppn >= 2 && kNvlsEfficiency[t.arch] > 0;
  if (nvls_ok) t.nvls = nvls_graph(t.arch, ppn, gpu_bw, net, comm.nics, nic_bw);
  t.nvls_channels = t.arch >= 3 ? (net ? 32 : 24) : 16;  // nvls.cc NVLS_NCHANNELS_SM90/SM100
  t.chunk_lat_us = kHwLat[nvlink ? kHwNvlink : kHwPci][kTree][kSimple];  // item 5

  const int n_idx = t.nodes <= 2 ? t.nodes - 1 : 2;
  const int ll_row = t.nodes == 1 ? t.arch : (spec.cpu_vendor == "amd" ? 1 : 0);
  const double ll_max = kLlMaxBw[ll_row][n_idx];
  const int intra_hw = nvlink ? kHwNvlink : kHwPci;
  const double net_overhead = spec.cpu_vendor == "amd" ? 2.0 : 1.0;
  const double ppn_f = double(t.ranks) / t.nodes;

  for (int k = 0; k < NcclTuning::kKinds; ++k) {
    const bool ar = k == 0;
    const int nsteps = ar ? 2 * (t.ranks - 1) : t.ranks - 1;
    for (int a = 0; a < kNcclAlgoCount; ++a) {
      if (a == kTree && !ar) continue;
      if (a == kPat && (ar || t.nodes != t.ranks)) continue;
      if (a == kNvls && (!nvls_ok || net || t.nvls.channels < 2)) continue;
      if (a == kNvlsTree && (!ar || !nvls_ok || !net || t.nvls.channels < 2)) continue;
      const NcclGraph& g = (a == kNvls || a == kNvlsTree) ? t.nvls : t.ring;
      for (int p = 0; p < kNcclProtoCount; ++p) {
        if ((a == kNvls || a == kNvlsTree || a == kPat) && p != kSimple) continue;
        if (p == kLL128 && !nvlink) continue;
        double bw = t.nodes <= 2 ? g.bw_intra_GBps : g.bw_inter_GBps;
        if (a == kNvls || a == kNvlsTree) {
          double intra = g.bw_intra_GBps * kNvlsEfficiency[t.arch] * (g.channels - 1) / g.channels;
          intra *= ar ? 2.0 : (ppn_f - 1) / ppn_f;
          const double inter = g.bw_inter_GBps * ((t.nodes <= 2 && a == kNvlsTree) ? 2 : 1);
          bw = std::min(intra, inter);
          if (a == kNvlsTree) bw = std::min(bw, kPerChMaxNvlsTree[t.arch][n_idx]);
        }
        double bus = g.channels * bw;
        if (a == kRing && p == kLL) bus = std::min(ll_max, bus * 0.5);
        if (a == kRing && p == kLL128) bus = std::min(bus * 0.92, g.channels * kPerChMaxRingLL128[t.arch][n_idx]);
        if (a == kTree) bus = std::min(bus * 0.92, g.channels * kPerChMaxTree[t.arch][n_idx]);
        if (a == kTree && p == kLL) bus = std::min(bus / 3.8, ll_max);
        if (a == kTree && p == kLL128) {
          bus = std::min(bus * (t.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                         g.channels * kPerChMaxTreeLL128[t.arch][n_idx]);
        }
        if (a == kPat) bus *= 0.75;
        if (!(a != kRing && !ar)) bus *= (a == kTree) ? 0.5 : double(t.ranks) / nsteps;
        t.bw_GBps[k][a][p] = float(bus);

        double lat = kBaseLat[a][p];
        const double intra_lat = kHwLat[intra_hw][a][p];
        const double inter_lat = ppn == 1 ? kHwLat[kHwNet][kTree][p] : kHwLat[kHwNet][a][p];
        if (a == kRing) {
          const double overhead = net ? net_overhead * (p == kSimple ? 3 : 1) : 0.0;
          const int inter_steps = !net ? 0 : ar ? 2 * (t.nodes - 1) : t.nodes - 1;
          lat += (nsteps - inter_steps) * std::max(intra_lat, overhead) + inter_steps * inter_lat;
        } else if (a == kTree) {
          lat += 2 * ((ppn - 1) * intra_lat + log2i(t.nodes) * inter_lat);
        } else if (a == kNvls) {
          lat = intra_lat + (net ? inter_lat : 0);
        } else if (a == kNvlsTree) {
          lat += intra_lat + 2 * log2i(t.nodes) * inter_lat;
        } else if (a == kPat) {
          lat += log2i(t.nodes) * (inter_lat / 3.5) + t.ranks * 2.8;
        }
        t.lat_us[k][a][p] = float(lat);
      }
    }
  }
  return t;
}

namespace {

constexpr double kKiB = 1024;

// ncclTopoGetAlgoTime (item 3): NCCL's own estimate, which NCCL chooses by; < 0 if unavailable.
// `lat_us` and `bw_GBps` receive the latency and the bandwidth it used.
double tuner_time_us(const NcclTuning& t, int k, double bytes, int a, int p, double& lat_us, double& bw_GBps) {
  double bw = t.bw_GBps[k][a][p];
  if (bw <= 0) return -1;
  double lat = t.lat_us[k][a][p];
  const long long n = static_cast<long long>(std::min(bytes, 9.0e18));
  const int log_size = log2i(n >> 6);
  if (a == kTree && k == 0 && (n >> 6) > 0 && log_size < 23) bw *= kTreeCorrection[p][log_size];
  if (a == kRing && p == kSimple && t.nodes > 1 && k == 0 && bytes / (double(t.channels) * t.ranks) >= 64) {
    lat *= t.arch >= 1 ? 1.4 : 1.9;
  }
  lat_us = lat;
  bw_GBps = bw;
  return lat + bytes / (1000.0 * bw);
}

// The largest chunk of an NVLS (or NVLS-tree) kernel: NCCL_NVLS_CHUNKSIZE, 128 KiB; NVLS-tree
// from 4 nodes treeMaxChunkSize, 64 KiB (item 5).
double nvls_max_chunk_bytes(bool tree, int nodes) { return tree && nodes >= 4 ? 64 * kKiB : 128 * kKiB; }

// The chunk such a kernel uses for `bytes` with `ops` concurrent operations, from `c_max` (item 5).
double nvls_chunk_bytes(bool tree, double c_max, double bytes, double ops) {
  double c = c_max;
  if (!tree) {
    if (bytes < 64 * ops * c && c > 64 * kKiB) c = 64 * kKiB;
    if (bytes < 8 * ops * c && c > 32 * kKiB) c = 32 * kKiB;
    if (bytes < 2 * ops * c && c > 16 * kKiB) c = 16 * kKiB;
    return c;
  }
  if (bytes < 32 * ops * c && c > 256 * kKiB) c = 256 * kKiB;
  if (bytes < 16 * ops * c && c > 128 * kKiB) c = 128 * kKiB;
  if (bytes < 4 * ops * c && c > 64 * kKiB) c = 64 * kKiB;
  if (bytes < 1 * ops * c && c > 32 * kKiB) c = 32 * kKiB;
  return c;
}

}  // namespace

NcclEstimate nccl_time(const NcclTuning& t, CollectiveKind kind, double bytes, NcclAlgo algo,
                       NcclProto proto) {
  const int k = kind_row(kind);
  if (k < 0) return {};
  if (t.ranks <= 1) return {0, algo, proto, 0};
  const int a = int(algo), p = int(proto);
  double lat = 0, bw = 0;
  double time_us = tuner_time_us(t, k, bytes, a, p, lat, bw);
  if (time_us < 0) return {};
  const bool nvls = a == kNvls || a == kNvlsTree;
  int launched = nvls ? t.nvls_channels : t.channels;
  if (a == kRing || a == kTree) {
    // Item 4: the launched kernel moves the data on fewer channels than the tuner timed.
    const double threads = p == kLL128 ? 640 : 512;
    const double threshold = p == kSimple ? 64 : (p == kLL && a == kRing ? 8.0 * t.ranks : 8.0);
    while (launched >= 2 && bytes < launched * threads * threshold) --launched;
    time_us = lat + bytes * std::max(1.0, double(t.ring.channels) / std::max(launched, 1)) / (1000.0 * bw);
  } else if (nvls && t.nvls.channels > 0) {
    // Item 5: rounds of chunks, each paying the chunk latency, plus one round of pipeline fill.
    const double ops = double(launched) * t.nvls.channels;
    const bool tree = a == kNvlsTree;
    const double c_max = nvls_max_chunk_bytes(tree, t.nodes);
    const double c = nvls_chunk_bytes(tree, c_max, bytes, ops);
    const double round_max_us = ops * c_max / (1000.0 * bw);
    const double round_us = c / c_max * std::max(round_max_us - t.chunk_lat_us, 0.0) + t.chunk_lat_us;
    time_us = lat + (bytes / (ops * c) + 1) * round_us;
  }
  return {time_us * 1e-6, algo, proto, launched};
}

NcclEstimate nccl_choice(const NcclTuning& t, CollectiveKind kind, double bytes, const NcclRestriction& only) {
  // NCCL picks the (algorithm, protocol) its tuner times fastest (item 3); we price that choice.
  const int k = kind_row(kind);
  if (k < 0) return {};
  if (t.ranks <= 1) return {0, only.algo.value_or(NcclAlgo::ring), only.proto.value_or(NcclProto::simple), 0};
  int best_a = -1, best_p = -1;
  double best = 0;
  for (int a = 0; a < kNcclAlgoCount; ++a) {
    if (only.algo && a != int(*only.algo)) continue;
    for (int p = 0; p < kNcclProtoCount; ++p) {
      if (only.proto && p != int(*only.proto)) continue;
      double lat = 0, bw = 0;
      const double tuner = tuner_time_us(t, k, bytes, a, p, lat, bw);
      if (tuner >= 0 && (best_a < 0 || tuner < best)) {
        best = tuner;
        best_a = a;
        best_p = p;
      }
    }
  }
  if (best_a < 0) return {};
  return nccl_time(t, kind, bytes, NcclAlgo(best_a), NcclProto(best_p));
}

NcclEstimate nccl_time(const NcclTuning& t, CollectiveKind kind, double bytes) {
  return nccl_choice(t, kind, bytes, NcclRestriction{});
}

std::string NcclRestriction::name() const {
  std::string out = algo ? std::string(nccl_algo_name(*algo)) : "";
  if (proto) out += (out.empty() ? "" : "/") + std::string(nccl_proto_name(*proto));
  return out;
}

std::string NcclRestriction::env() const {
  std::string out = algo ? "NCCL_ALGO=" + std::string(nccl_algo_name(*algo)) : "";
  if (proto) out += (out.empty() ? "" : ", ") + std::string("NCCL_PROTO=") + std::string(nccl_proto_name(*proto));
  return out;
}

std::optional<NcclAlgo> parse_nccl_algo(std::string_view name) {
  std::string n;
  for (char ch : name) {
    if (ch != '_') n += char(std::tolower(static_cast<unsigned char>(ch)));
  }
  if (n == "tree") return NcclAlgo::tree;
  if (n == "ring") return NcclAlgo::ring;
  if (n == "nvls") return NcclAlgo::nvls;
  if (n == "nvlstree") return NcclAlgo::nvls_tree;
  if (n == "pat") return NcclAlgo::pat;
  return std::nullopt;
}

std::optional<NcclProto> parse_nccl_proto(std::string_view name) {
  std::string n;
  for (char ch : name) n += char(std::tolower(static_cast<unsigned char>(ch)));
  if (n == "ll") return NcclProto::ll;
  if (n == "ll128") return NcclProto::ll128;
  if (n == "simple") return NcclProto::simple;
  return std::nullopt;
}

}  // namespace autoddl::costmodel
