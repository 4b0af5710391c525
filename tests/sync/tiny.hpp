// A small model and a hand-made cluster for the sync tests: numbers small enough to compute
// every expected value by hand in the test comments.
#pragma once
#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/graph_builder.hpp"

namespace autoddl::sync::test {

// tokens (8, 4) -> embedding "emb.table" (1000 x 16, fp32, sparse) -> reshape (8, 64)
// -> fc1 (64 -> 32) -> relu -> fc2 (32 -> 10) -> cross-entropy. Without the embedding the
// input is an (8, 64) fp32 tensor. Variables in graph order and fp32 bytes:
//   emb.table 1000x16 = 64000, fc1.weight 64x32 = 8192, fc1.bias 32 = 128,
//   fc2.weight 32x10 = 1280, fc2.bias 10 = 40.
inline costmodel::Graph tiny_model(bool with_embedding = true) {
  using namespace costmodel;
  GraphBuilder b("tiny", "test:tiny", 8, DType::fp32);
  int x;
  if (with_embedding) {
    int tokens = b.input("tokens", {8, 4}, DType::int64);
    int e = b.embedding("emb.lookup", b.parameter("emb.table", {1000, 16}), tokens);
    x = b.reshape("flat", e, {8, 64});
  } else {
    x = b.input("features", {8, 64}, DType::fp32);
  }
  int labels = b.input("labels", {8}, DType::int64);
  int h = b.relu("relu", b.linear("fc1", x, 32));
  b.cross_entropy("loss", b.linear("fc2", h, 10), labels);
  return b.finish();
}

// nodes x gpus_per_node GPUs; one NIC of nic_bytes_per_s per node at efficiency 1 and latency
// alpha_s; a GPU fast enough that compute is tiny unless `peak_flops` says otherwise.
inline costmodel::ClusterSpec test_cluster(int nodes, int gpus_per_node, double nic_bytes_per_s = 1e9,
                                           double alpha_s = 1e-5, double peak_flops = 1e15) {
  costmodel::ClusterSpec c;
  c.name = "test";
  c.nodes = nodes;
  c.gpus_per_node = gpus_per_node;
  c.gpu.name = "test-gpu";
  c.gpu.peak_flops_fp32 = c.gpu.peak_flops_fp16 = c.gpu.peak_flops_bf16 = peak_flops;
  c.gpu.memory_bytes = 16e9;
  c.gpu.hbm_bytes_per_s = 1e13;
  c.gpu.launch_overhead_s = 0;
  c.intra.fabric = gpus_per_node > 1 ? "pcie" : "none";
  c.intra.bw_bytes_per_s = gpus_per_node > 1 ? 1e10 : 0;
  c.intra.latency_s = gpus_per_node > 1 ? 1e-6 : 0;
  c.inter.nic_bw_bytes_per_s = nic_bytes_per_s;
  c.inter.latency_s = alpha_s;
  return c;
}

}  // namespace autoddl::sync::test
