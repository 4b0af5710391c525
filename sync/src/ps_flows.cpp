// The flows are described in ps_flows.hpp's header comment.
#include "ps_flows.hpp"

namespace autoddl::sync::detail {

namespace {
constexpr double kIndexBytes = 8;  // int64 row index per touched row

// Bytes of the rows a share of 1/`shares` of the global batch touches, with their indices.
double sparse_bytes(const Variable& v, double fraction, int shares) {
  return v.rows_touched(shares) * fraction * (v.row_bytes() + kIndexBytes);
}
}  // namespace

PsShardFlows ps_shard_flows(const Variable& v, double fraction, const Synchronizer& s, int nodes,
                            int gpus_per_node) {
  const int G = gpus_per_node, W = nodes * gpus_per_node;
  PsShardFlows f;
  f.async = !s.sync || s.staleness > 0;
  f.proxy = s.local_replication && !v.sparse && G > 1;
  f.pulls_per_node = f.proxy ? 1 : G;
  if (v.sparse) {
    const double gpu = sparse_bytes(v, fraction, W);  // one GPU's touched rows
    f.push_bytes = sparse_bytes(v, fraction, nodes);  // a node's: the union of its GPUs'
    f.pull_bytes = gpu;                               // each GPU reads its own rows
    f.reduce_kind = costmodel::CollectiveKind::all_gather;
    f.reduce_bytes = G > 1 ? G * gpu : 0;
    f.read_bytes = G > 1 ? G * gpu : 0;
  } else {
    const double b = v.bytes * fraction;
    f.push_bytes = f.pull_bytes = b;
    f.reduce_bytes = G > 1 ? b : 0;
    f.read_bytes = G > 1 ? b : 0;
  }
  return f;
}

}  // namespace autoddl::sync::detail
