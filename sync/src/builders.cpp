// Each builder reproduces one AutoDist strategy class (file named in its row), or Horovod's
// tensor fusion / DDP's bucketing. Variables are visited in graph order, as AutoDist walks
// graph_item.trainable_var_op_to_var; fusion buffers and buckets follow gradient-ready order.
#include "autoddl/sync/builders.hpp"

#include <algorithm>
#include <set>

#include "autoddl/costmodel/error.hpp"

namespace autoddl::sync {

using costmodel::ClusterSpec;

int smallest_divisor_shards(int64_t dim0) {
  if (dim0 < 2) return 1;
  for (int64_t i = 2; i * i <= dim0; ++i) {
    if (dim0 % i == 0) return static_cast<int>(i);
  }
  return static_cast<int>(std::min<int64_t>(dim0, 1 << 30));
}

int smallest_non_divisor_shards(int64_t dim0) {
  for (int64_t i = 2; i <= dim0; ++i) {
    if (dim0 % i != 0) return static_cast<int>(i);
  }
  return 1;
}

namespace {

Synchronizer ps_on(int server) {
  Synchronizer s;
  s.arch = Arch::ps;
  s.server = server;
  return s;  // AutoDist PS defaults: local_proxy_variable=False, sync=True, staleness=0
}

Synchronizer ar_in(int group) {
  Synchronizer s;
  s.arch = Arch::all_reduce;
  s.group = group;  // spec NCCL -> our "auto" (NCCL picks), compressor NoneCompressor
  return s;
}

VarConfig whole(const Variable& v, Synchronizer s) { return {v.name, 0, 1, false, {s}}; }

// ps_lb_strategy.py: each variable goes to the currently least-loaded PS by byte size
// (byte_size_load_fn = numel x dtype size); ties go to the first server (Python's min).
// Servers ordered by (load, index), so each placement costs O(log servers) (a cluster may have
// 10^5 nodes, each a server).
struct LoadBalancer {
  std::vector<double> load;
  std::set<std::pair<double, int>> order;
  explicit LoadBalancer(int servers) : load(static_cast<size_t>(servers), 0.0) {
    for (int s = 0; s < servers; ++s) order.insert({0.0, s});
  }
  int take(std::set<std::pair<double, int>>::iterator it, double bytes) {
    const int s = it->second;
    order.erase(it);
    load[static_cast<size_t>(s)] += bytes;
    order.insert({load[static_cast<size_t>(s)], s});
    return s;
  }
  int place(double bytes) { return take(order.begin(), bytes); }
  // The least-loaded server among those not yet holding a shard of this variable (`used`); once
  // every server holds one, round-robin starts over (partitioned_ps_strategy.py).
  int place_shard(double bytes, std::set<int>& used) {
    if (used.size() == load.size()) used.clear();
    auto it = order.begin();
    while (used.count(it->second)) ++it;
    const int s = take(it, bytes);
    used.insert(s);
    return s;
  }
};

Strategy named(const char* name) { return {name, name, {}}; }

Strategy build_ps(const std::vector<Variable>& vars, const ClusterSpec&) {
  Strategy s = named("ps");  // ps_strategy.py: every variable on the first reduction device
  for (const Variable& v : vars) s.vars.push_back(whole(v, ps_on(0)));
  return s;
}

Strategy build_ps_lb(const std::vector<Variable>& vars, const ClusterSpec& c) {
  Strategy s = named("ps_lb");
  LoadBalancer lb(c.nodes);
  for (const Variable& v : vars) s.vars.push_back(whole(v, ps_on(lb.place(v.bytes))));
  return s;
}

// partitioned_ps_strategy.py / uneven_partition_ps_strategy.py: axis 0; no partition with a
// single PS.
Strategy partitioned_ps(const char* name, const std::vector<Variable>& vars, const ClusterSpec& c,
                        bool uneven) {
  Strategy s = named(name);
  LoadBalancer lb(c.nodes);
  for (const Variable& v : vars) {
    int shards = c.nodes < 2 ? 1 : uneven ? smallest_non_divisor_shards(v.rows())
                                          : smallest_divisor_shards(v.rows());
    VarConfig vc{v.name, 0, shards, uneven && shards > 1, {}};
    std::set<int> used;
    for (int i = 0; i < shards; ++i) {
      double bytes = v.bytes * shard_fraction(v, vc, i);
      vc.parts.push_back(ps_on(shards == 1 ? lb.place(bytes) : lb.place_shard(bytes, used)));
    }
    s.vars.push_back(std::move(vc));
  }
  return s;
}

Strategy build_partitioned_ps(const std::vector<Variable>& vars, const ClusterSpec& c) {
  return partitioned_ps("partitioned_ps", vars, c, false);
}
Strategy build_uneven_partitioned_ps(const std::vector<Variable>& vars, const ClusterSpec& c) {
  return partitioned_ps("uneven_partitioned_ps", vars, c, true);
}

// all_reduce_strategy.py: group = var_index // chunk_size.
Strategy build_all_reduce(const std::vector<Variable>& vars, const ClusterSpec&) {
  Strategy s = named("all_reduce");
  for (size_t i = 0; i < vars.size(); ++i)
    s.vars.push_back(whole(vars[i], ar_in(static_cast<int>(i) / kAutoDistChunkSize)));
  return s;
}

// partitioned_all_reduce_strategy.py: axis 0 into the smallest divisor, shard i of the
// variable in group (counter + i) // chunk_size, the counter advancing by the shard count.
Strategy build_partitioned_ar(const std::vector<Variable>& vars, const ClusterSpec&) {
  Strategy s = named("partitioned_ar");
  int counter = 0;
  for (const Variable& v : vars) {
    int shards = smallest_divisor_shards(v.rows());
    VarConfig vc{v.name, 0, shards, false, {}};
    for (int i = 0; i < shards; ++i) vc.parts.push_back(ar_in((counter + i) / kAutoDistChunkSize));
    counter += shards;
    s.vars.push_back(std::move(vc));
  }
  return s;
}

// parallax_strategy.py: dense gradients all-reduced in group idx // 128, where idx enumerates
// every trainable variable (sparse ones included: `for idx, var in enumerate(...)`), sparse
// ones on load-balanced PSs without a local proxy.
Strategy build_parallax(const std::vector<Variable>& vars, const ClusterSpec& c) {
  Strategy s = named("parallax");
  LoadBalancer lb(c.nodes);
  for (size_t i = 0; i < vars.size(); ++i) {
    const Variable& v = vars[i];
    if (v.sparse) {
      s.vars.push_back(whole(v, ps_on(lb.place(v.bytes))));
    } else {
      s.vars.push_back(whole(v, ar_in(static_cast<int>(i) / kAutoDistChunkSize)));
    }
  }
  return s;
}

// Buckets in gradient-ready order. Horovod's fusion buffer takes a tensor only if it still
// fits under the threshold (a larger tensor is fused alone); DDP's reducer appends the tensor
// and closes the bucket once it reaches the cap (compute_bucket_assignment_by_size), the
// first bucket with the smaller cap.
Strategy bucketed(const char* name, const std::vector<Variable>& vars, double first_cap,
                  double cap, bool close_after_crossing) {
  Strategy s = named(name);
  std::vector<Synchronizer> sync(vars.size());
  int group = 0;
  double filled = 0, limit = first_cap;
  for (int i : backward_ready_order(vars)) {
    if (!close_after_crossing && filled > 0 && filled + vars[i].bytes > limit) {
      ++group;
      filled = 0;
      limit = cap;
    }
    sync[static_cast<size_t>(i)] = ar_in(group);
    filled += vars[i].bytes;
    if (close_after_crossing && filled >= limit) {
      ++group;
      filled = 0;
      limit = cap;
    }
  }
  for (size_t i = 0; i < vars.size(); ++i) s.vars.push_back(whole(vars[i], sync[i]));
  return s;
}

Strategy build_horovod(const std::vector<Variable>& vars, const ClusterSpec&) {
  return bucketed("horovod", vars, kHorovodFusionBytes, kHorovodFusionBytes, false);
}
Strategy build_ddp(const std::vector<Variable>& vars, const ClusterSpec&) {
  return bucketed("ddp", vars, kDdpFirstBucketBytes, kDdpBucketBytes, true);
}

// The same buckets with every dense all-reduce in fp16 (compression.hpp: lossy, casts charged).
// Horovod: hvd.DistributedOptimizer(..., compression=hvd.Compression.fp16); FP16Compressor
// (horovod/tensorflow/compression.py, horovod/torch/compression.py) casts each floating-point
// gradient to float16 before the all-reduce and back to its dtype after.
// DDP: model.register_comm_hook(None, fp16_compress_hook)
// (torch/distributed/algorithms/ddp_comm_hooks/default_hooks.py) casts each bucket's flat buffer
// to float16, all-reduces it and copies the result back into the fp32 bucket.
Strategy fp16(Strategy s, const char* name, const std::vector<Variable>& vars) {
  s.id = s.builder = name;
  for (size_t i = 0; i < vars.size(); ++i) {
    if (!vars[i].sparse) s.vars[i].parts[0].compressor = Compressor::fp16;
  }
  return s;
}

Strategy build_horovod_fp16(const std::vector<Variable>& vars, const ClusterSpec& c) {
  return fp16(build_horovod(vars, c), "horovod-fp16", vars);
}
Strategy build_ddp_fp16(const std::vector<Variable>& vars, const ClusterSpec& c) {
  return fp16(build_ddp(vars, c), "ddp-fp16", vars);
}

}  // namespace

const std::vector<BuilderInfo>& builders() {
  static const std::vector<BuilderInfo> table = {
      {"ps", "AutoDist PS: every variable on node 0's CPU", build_ps},
      {"ps_lb", "AutoDist PSLoadBalancing: greedy least-loaded server by bytes", build_ps_lb},
      {"partitioned_ps", "AutoDist PartitionedPS: axis 0 in the smallest divisor, shards load-balanced",
       build_partitioned_ps},
      {"uneven_partitioned_ps", "AutoDist UnevenPartitionedPS: smallest non-divisor shard count",
       build_uneven_partitioned_ps},
      {"all_reduce", "AutoDist AllReduce: groups of 128 variables in graph order", build_all_reduce},
      {"partitioned_ar", "AutoDist PartitionedAR: axis-0 shards all-reduced in groups of 128",
       build_partitioned_ar},
      {"parallax", "AutoDist Parallax: sparse to load-balanced PS, dense to all-reduce", build_parallax},
      {"horovod", "Horovod tensor fusion: 64 MiB fusion buffers in gradient-ready order", build_horovod},
      {"ddp", "PyTorch DDP: 25 MiB buckets (first 1 MiB) in gradient-ready order", build_ddp},
      {"horovod-fp16", "Horovod with hvd.Compression.fp16: its buffers all-reduced in fp16 (lossy)",
       build_horovod_fp16},
      {"ddp-fp16", "PyTorch DDP with fp16_compress_hook: its buckets all-reduced in fp16 (lossy)", build_ddp_fp16},
  };
  return table;
}

const BuilderInfo& find_builder(std::string_view name) {
  std::string known;
  for (const BuilderInfo& b : builders()) {
    if (b.name == name) return b;
    known += (known.empty() ? "" : ", ") + std::string(b.name);
  }
  throw InputError("--builder", "", "unknown builder '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace autoddl::sync
