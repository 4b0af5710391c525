// Tree all-reduce (NCCL's double binary tree, Sanders et al. 2009): inside each node a chain of
// its g ranks, across nodes two binary trees over the n nodes (NCCL's ncclGetBtree and its
// mirror, ncclGetDtree), each carrying half the buffer; reduce up to the root, then broadcast
// down. Tree 0's chain runs towards local rank 0 (its head, the rank that talks to the other
// nodes), tree 1's towards local rank g−1, so the two trees' inter-node traffic leaves from
// different GPUs. The trees have depth ⌈log2 n⌉ (the root has one child), so the longest path
// of a phase is (g−1) intra hops plus ⌈log2 n⌉ inter hops, costmodel's latency term.
// step fidelity: each phase pipelined in chunks, as a dataflow: an edge sends chunk j once its
// source holds chunk j (from all its children in the reduce, from its parent in the broadcast),
// at most kWindow chunks in flight per edge (NCCL's slots), not in lockstep.
// flow fidelity: one flow per edge (and NIC channel) per phase with the phase's bytes, after
// waiting the longest path's latencies but one.
#include <algorithm>
#include <cmath>
#include <functional>

#include "../transfers.hpp"
#include "algorithms.hpp"

namespace autoddl::sim::collectives {

namespace {

constexpr int kWindow = 2;          // chunks in flight per edge
constexpr int kMaxChunks = 64;      // per phase and tree
constexpr double kChunkBytes = 64 << 10;  // smallest chunk

// NCCL's ncclGetBtree: parent of `rank` in the binary tree over n ranks rooted at 0 (−1 at
// the root). Rank 0 has one child (the largest power of two below n), which is why the depth
// is ⌈log2 n⌉.
int btree_parent(int n, int rank) {
  if (rank == 0) return -1;
  int bit = 1;
  while (bit < n && !(bit & rank)) bit <<= 1;
  int up = (rank ^ bit) | (bit << 1);
  if (up >= n) up = rank ^ bit;
  return up;
}

// Tree t's parent of node `node` (ncclGetDtree: tree 1 mirrors tree 0 for even n, shifts it
// by one for odd n, so that a node is interior in at most one of the two).
int dtree_parent(int n, int tree, int node) {
  if (tree == 0) return btree_parent(n, node);
  if (n % 2 == 1) {
    const int shifted = (node - 1 + n) % n;
    const int up = btree_parent(n, shifted);
    return up < 0 ? -1 : (up + 1) % n;
  }
  const int up = btree_parent(n, n - 1 - node);
  return up < 0 ? -1 : n - 1 - up;
}

struct Edge {
  int src, dst;  // rank indices into the group, in the reduce direction (child -> parent)
};

// Reduce-direction edges of both trees, each tree's list with its own rank graph.
std::vector<Edge> tree_edges(const RankGroup& g, int tree) {
  const int local = g.local_size, n = g.size() / local;
  std::vector<Edge> edges;
  auto head = [&](int node) { return node * local + (tree == 0 ? 0 : local - 1); };
  for (int node = 0; node < n; ++node) {
    for (int i = 1; i < local; ++i) {  // the chain towards the head
      const int from = tree == 0 ? i : local - 1 - i;
      const int to = tree == 0 ? i - 1 : local - i;
      edges.push_back({node * local + from, node * local + to});
    }
    const int up = dtree_parent(n, tree, node);
    if (up >= 0) edges.push_back({head(node), head(up)});
  }
  return edges;
}

bool crosses_nodes(const sg4::Host* a, const sg4::Host* b) {
  return a->get_englobing_zone() != b->get_englobing_zone();
}

// Longest path latency along `edges` (a forest): the latency part of one phase.
double longest_path_latency(const RankGroup& g, const std::vector<Edge>& edges) {
  const int p = g.size();
  std::vector<int> parent(p, -1);
  std::vector<double> up_latency(p, 0);
  for (const Edge& e : edges) {
    parent[e.src] = e.dst;
    up_latency[e.src] = route_latency_s(g.hosts[e.src], g.hosts[e.dst]);
  }
  double worst = 0;
  for (int r = 0; r < p; ++r) {
    double sum = 0;
    for (int x = r; parent[x] >= 0; x = parent[x]) sum += up_latency[x];
    worst = std::max(worst, sum);
  }
  return worst;
}

// One phase (reduce if `up`, else broadcast) of both trees, each carrying half the bytes.
void run_phase_flow(const RankGroup& g, const std::vector<Edge> (&trees)[2], double bytes, bool up) {
  double latency = 0, max_edge = 0;
  for (const auto& edges : trees) {
    latency = std::max(latency, longest_path_latency(g, edges));
    for (const Edge& e : edges) max_edge = std::max(max_edge, route_latency_s(g.hosts[e.src], g.hosts[e.dst]));
  }
  wait_latency(latency - max_edge);
  Transfers batch;
  for (const auto& edges : trees)
    for (const Edge& e : edges) {
      sg4::Host* src = g.hosts[up ? e.src : e.dst];
      sg4::Host* dst = g.hosts[up ? e.dst : e.src];
      const int flows = crosses_nodes(src, dst) ? std::max(1, g.nic_channels) : 1;
      for (int c = 0; c < flows; ++c) batch.add(src, dst, bytes / 2 / flows);
    }
  batch.wait_all();
}

// The pipelined dataflow of one phase of both trees.
void run_phase_step(const RankGroup& g, const std::vector<Edge> (&trees)[2], double bytes, bool up) {
  const int chunks = std::clamp(static_cast<int>(std::ceil(bytes / 2 / kChunkBytes)), 1, kMaxChunks);
  const double chunk = bytes / 2 / chunks;
  const int p = g.size();
  // Directed edges of this phase over (tree, rank) states.
  struct Flow {
    int tree, src, dst, flows;
    int next = 0, in_flight = 0;  // next chunk to send, chunks in flight
  };
  std::vector<Flow> flows;
  // have[tree][rank][chunk]: inputs of that chunk still missing at that rank.
  std::vector<std::vector<std::vector<int>>> missing(2, std::vector<std::vector<int>>(p, std::vector<int>(chunks, 0)));
  std::vector<std::vector<std::vector<int>>> out_edges(2, std::vector<std::vector<int>>(p));
  for (int t = 0; t < 2; ++t)
    for (const Edge& e : trees[t]) {
      const int src = up ? e.src : e.dst, dst = up ? e.dst : e.src;
      const int f = crosses_nodes(g.hosts[src], g.hosts[dst]) ? std::max(1, g.nic_channels) : 1;
      out_edges[t][src].push_back(static_cast<int>(flows.size()));
      flows.push_back({t, src, dst, f});
      for (int c = 0; c < chunks; ++c) ++missing[t][dst][c];
    }
  // pending[i]: (flow, chunk, remaining sub-flows) of comm i of the batch.
  struct Pending {
    int flow, chunk;
  };
  std::vector<Pending> pending;
  std::vector<int> parts_left;  // per (flow, chunk) sub-flows not done, flattened
  parts_left.assign(flows.size() * chunks, 0);
  Transfers batch;
  auto try_send = [&](int fi) {
    Flow& f = flows[fi];
    while (f.next < chunks && f.in_flight < kWindow && missing[f.tree][f.src][f.next] == 0) {
      for (int c = 0; c < f.flows; ++c) {
        batch.add(g.hosts[f.src], g.hosts[f.dst], chunk / f.flows);
        pending.push_back({fi, f.next});
      }
      parts_left[fi * chunks + f.next] = f.flows;
      ++f.in_flight;
      ++f.next;
    }
  };
  for (size_t fi = 0; fi < flows.size(); ++fi) try_send(static_cast<int>(fi));
  while (batch.size() > 0) {
    const size_t i = batch.wait_any();
    const Pending done = pending[i];
    pending.erase(pending.begin() + static_cast<long>(i));
    if (--parts_left[done.flow * chunks + done.chunk] > 0) continue;
    Flow& f = flows[done.flow];
    --f.in_flight;
    try_send(done.flow);
    if (--missing[f.tree][f.dst][done.chunk] == 0)
      for (int next : out_edges[f.tree][f.dst]) try_send(next);
  }
}

}  // namespace

bool tree_group(int ranks, int local_size) {
  return local_size >= 1 && ranks % local_size == 0 && ranks / local_size > 1;
}

void all_reduce_tree(const RankGroup& g, double bytes, Fidelity f) {
  const std::vector<Edge> trees[2] = {tree_edges(g, 0), tree_edges(g, 1)};
  for (bool up : {true, false}) {
    if (f == Fidelity::flow) run_phase_flow(g, trees, bytes, up);
    else run_phase_step(g, trees, bytes, up);
  }
}

}  // namespace autoddl::sim::collectives
