// Boxing costs: the 1-D table and the nd shortest path (see boxing.hpp). The table per tensor
// shape prices the steps between the tensor's valid nd-SBPs once and finds the cheapest paths
// from a state (Dijkstra) when that state is first asked about, comparing (time, steps) so that
// among equally fast conversions the one with fewer collectives wins. (All pairs by
// Floyd–Warshall, as before, cost O(states³) per table, most of an evaluation's time on a 3-D
// mesh, for the few pairs an evaluation asks about.)
#include "autoddl/costmodel/boxing.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>

#include "autoddl/costmodel/error.hpp"

namespace autoddl::costmodel {

bool boxing_step_1d(const DeviceMesh& mesh, int d, Sbp from, Sbp to, double group_bytes,
                    BoxingStep& step) {
  const int p = mesh.dims[d].size;
  if (from == to || p <= 1) return false;
  CollectiveKind kind;
  double bytes = group_bytes;
  if (from.is_split() && to.is_broadcast()) {
    kind = CollectiveKind::all_gather;
  } else if (from.is_partial() && to.is_broadcast()) {
    kind = CollectiveKind::all_reduce;
  } else if (from.is_partial() && to.is_split()) {
    kind = CollectiveKind::reduce_scatter;
  } else if (from.is_split() && to.is_split()) {
    kind = CollectiveKind::all_to_all;
    bytes = group_bytes / p;  // each rank's buffer is its piece
  } else {
    return false;  // B→S, B→P, S→P: a local slice or zero-fill
  }
  const CollectiveEstimate e = mesh.collective(d, kind, bytes);
  step = {d, kind, bytes, collective_info(kind).bw_factor(p) * bytes, e.time_s, e.algo};
  return true;
}

namespace {

void enumerate_states(int ndims, int rank, int d, NdSbp& cur, const int* shape_sizes,
                      const Shape& shape, std::vector<NdSbp>& out) {
  if (d == ndims) {
    if (divides(cur, shape_sizes, shape)) out.push_back(cur);
    return;
  }
  cur.dims[d] = Sbp::broadcast();
  enumerate_states(ndims, rank, d + 1, cur, shape_sizes, shape, out);
  cur.dims[d] = Sbp::partial();
  enumerate_states(ndims, rank, d + 1, cur, shape_sizes, shape, out);
  for (int a = 0; a < rank; ++a) {
    cur.dims[d] = Sbp::split(a);
    enumerate_states(ndims, rank, d + 1, cur, shape_sizes, shape, out);
  }
}

}  // namespace

namespace {

int sbp_code(Sbp s) { return s.is_broadcast() ? 0 : s.is_partial() ? 1 : 2 + s.axis; }

Sbp sbp_of_code(int v) { return v == 0 ? Sbp::broadcast() : v == 1 ? Sbp::partial() : Sbp::split(v - 2); }

// Mesh dims nest lower-outer (dim 0 outermost, as ranks are numbered), so when two dims split one
// axis the higher one cuts each of the lower one's pieces. A step on dim d that adds, removes or
// moves a split of axis a is then a local slice or one collective of dim d only if no higher dim
// splits a too: (S(1),S(1)) -> (B,S(1)) is no all-gather over dim 0 (rank (i, j) holds quarter
// 2i + j, and the half j it needs is quarters 2j and 2j + 1). Such a conversion goes through the
// higher dim first (gather it, step dim d, slice it again), as an executor runs it
// (calib/cpu/sbp_step.py checks the same rule on every step).
bool nesting_allows(const NdSbp& from, int d, Sbp to, const std::vector<int>& sizes) {
  const Sbp a = from.dims[d];
  for (int e = d + 1; e < from.ndims; ++e) {
    const Sbp inner = from.dims[e];
    if (sizes[e] <= 1 || !inner.is_split()) continue;
    if ((a.is_split() && a.axis == inner.axis) || (to.is_split() && to.axis == inner.axis)) return false;
  }
  return true;
}

}  // namespace

BoxingTable::BoxingTable(const DeviceMesh& mesh, const Shape& shape, double logical_bytes, bool exact_layout) {
  const int nd = mesh.ndims();
  std::vector<int> sizes = mesh.shape();
  NdSbp cur;
  cur.ndims = static_cast<uint8_t>(nd);
  enumerate_states(nd, static_cast<int>(shape.size()), 0, cur, sizes.data(), shape, states_);
  n_ = static_cast<int>(states_.size());
  radix_ = 2 + static_cast<int>(shape.size());
  size_t codes = 1;
  for (int d = 0; d < nd; ++d) codes *= static_cast<size_t>(radix_);
  index_.assign(codes, -1);
  std::vector<int> code(static_cast<size_t>(n_), 0);
  for (int i = 0; i < n_; ++i) {
    int c = 0;
    for (int d = nd; d-- > 0;) c = c * radix_ + sbp_code(states_[i].dims[d]);
    code[i] = c;
    index_[static_cast<size_t>(c)] = i;
  }
  // The steps: from each state, every other value on one mesh dim that leaves a valid state.
  edge_begin_.assign(static_cast<size_t>(n_) + 1, 0);
  for (int i = 0; i < n_; ++i) {
    edge_begin_[i] = static_cast<int>(edges_.size());
    int stride = 1;
    for (int d = 0; d < nd; ++d, stride *= radix_) {
      const int own = sbp_code(states_[i].dims[d]);
      // The group tensor of dim d: split factors of the other dims divide |T|.
      double group_bytes = logical_bytes;
      for (int e = 0; e < nd; ++e) {
        if (e != d && states_[i].dims[e].is_split()) group_bytes /= sizes[e];
      }
      for (int v = 0; v < radix_; ++v) {
        if (v == own) continue;
        const int j = index_[static_cast<size_t>(code[i] + (v - own) * stride)];
        if (j < 0) continue;
        if (exact_layout && !nesting_allows(states_[i], d, sbp_of_code(v), sizes)) continue;
        Edge e;
        e.from = i;
        e.to = j;
        if (boxing_step_1d(mesh, d, states_[i].dims[d], sbp_of_code(v), group_bytes, e.step)) {
          e.steps = 1;
        } else {
          e.step = BoxingStep{d, CollectiveKind::all_reduce, 0, 0, -1};  // local step
        }
        edges_.push_back(e);
      }
    }
  }
  edge_begin_[static_cast<size_t>(n_)] = static_cast<int>(edges_.size());
  const size_t cells = static_cast<size_t>(n_) * static_cast<size_t>(n_);
  time_.assign(cells, std::numeric_limits<double>::infinity());
  via_.assign(cells, -1);
  built_ = std::make_unique<std::atomic<bool>[]>(static_cast<size_t>(n_));
  for (int i = 0; i < n_; ++i) built_[static_cast<size_t>(i)].store(false, std::memory_order_relaxed);
}

void BoxingTable::build_row(int from) const {
  AUTODDL_CHECK(from >= 0 && from < n_) << "boxing state out of range";
  std::lock_guard<std::mutex> lock(build_);
  if (built_[static_cast<size_t>(from)].load(std::memory_order_acquire)) return;
  double* time = &time_[static_cast<size_t>(from) * n_];
  int* via = &via_[static_cast<size_t>(from) * n_];
  std::vector<int> steps(static_cast<size_t>(n_), std::numeric_limits<int>::max() / 4);
  time[from] = 0;
  steps[from] = 0;
  // Dijkstra on (time, collective steps), relative tolerance on time: among equally fast paths
  // the one with fewer collectives. A state improved again is queued again (stale entries skipped).
  struct Item {
    double time;
    int steps, state;
    bool operator>(const Item& o) const { return time != o.time ? time > o.time : steps > o.steps; }
  };
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> queue;
  queue.push({0, 0, from});
  while (!queue.empty()) {
    const Item it = queue.top();
    queue.pop();
    if (it.time != time[it.state] || it.steps != steps[it.state]) continue;
    for (int k = edge_begin_[it.state]; k < edge_begin_[it.state + 1]; ++k) {
      const Edge& e = edges_[static_cast<size_t>(k)];
      const double t = it.time + (e.steps ? e.step.time_s : 0.0);
      const int s = it.steps + e.steps;
      const double cur_t = time[e.to];
      const bool better = t < cur_t * (1 - 1e-12) || (t <= cur_t * (1 + 1e-12) && s < steps[e.to]);
      if (!better) continue;
      time[e.to] = t;
      steps[e.to] = s;
      via[e.to] = k;
      queue.push({t, s, e.to});
    }
  }
  built_[static_cast<size_t>(from)].store(true, std::memory_order_release);
}

int BoxingTable::index_of(const NdSbp& s) const {
  if (s.ndims != (n_ > 0 ? states_[0].ndims : s.ndims)) return -1;
  int c = 0;
  for (int d = s.ndims; d-- > 0;) {
    const Sbp x = s.dims[d];
    if (x.is_split() && (x.axis < 0 || x.axis + 2 >= radix_)) return -1;
    c = c * radix_ + sbp_code(x);
  }
  return c >= 0 && static_cast<size_t>(c) < index_.size() ? index_[static_cast<size_t>(c)] : -1;
}

std::vector<BoxingStep> BoxingTable::path(int from, int to) const {
  std::vector<BoxingStep> out;
  AUTODDL_CHECK(from >= 0 && to >= 0 && from < n_ && to < n_) << "boxing state out of range";
  ensure_row(from);
  const int* via = &via_[static_cast<size_t>(from) * n_];
  AUTODDL_CHECK(time_[static_cast<size_t>(from) * n_ + to] < std::numeric_limits<double>::infinity()) << "no boxing path";
  int cur = to;
  int guard = 0;
  while (cur != from) {
    const Edge& e = edges_[static_cast<size_t>(via[cur])];
    if (e.step.time_s >= 0) out.push_back(e.step);
    cur = e.from;
    AUTODDL_CHECK(++guard <= n_) << "boxing path loops";
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::vector<NdSbp> BoxingTable::route(int from, int to) const {
  AUTODDL_CHECK(from >= 0 && to >= 0 && from < n_ && to < n_) << "boxing state out of range";
  ensure_row(from);
  const int* via = &via_[static_cast<size_t>(from) * n_];
  std::vector<NdSbp> out{states_[static_cast<size_t>(to)]};
  int cur = to;
  int guard = 0;
  while (cur != from) {
    cur = edges_[static_cast<size_t>(via[cur])].from;
    out.push_back(states_[static_cast<size_t>(cur)]);
    AUTODDL_CHECK(++guard <= n_) << "boxing path loops";
  }
  std::reverse(out.begin(), out.end());
  return out;
}

void BoxingTable::tally(int from, int to, CommTally& tally, double times) const {
  if (from == to) return;
  ensure_row(from);
  const int* via = &via_[static_cast<size_t>(from) * n_];
  int cur = to;
  int guard = 0;
  while (cur != from) {
    const Edge& e = edges_[static_cast<size_t>(via[cur])];
    if (e.step.time_s >= 0) tally.add(e.step.kind, e.step.time_s * times, e.step.wire_bytes * times, times);
    cur = e.from;
    AUTODDL_CHECK(++guard <= n_) << "boxing path loops";
  }
}

const BoxingTable& BoxingCache::get(const Shape& shape, double logical_bytes, bool exact_layout) {
  auto key = std::make_tuple(shape, logical_bytes, exact_layout);
  auto it = tables_.find(key);
  if (it == tables_.end()) {
    it = tables_.emplace(key, std::make_unique<BoxingTable>(mesh_, shape, logical_bytes, exact_layout)).first;
  }
  return *it->second;
}

double boxing_time_s(const DeviceMesh& mesh, const Shape& shape, double logical_bytes,
                     const NdSbp& from, const NdSbp& to) {
  BoxingTable t(mesh, shape, logical_bytes);
  int a = t.index_of(from), b = t.index_of(to);
  AUTODDL_CHECK(a >= 0 && b >= 0) << "nd-SBP not valid for this tensor: " << to_string(from)
                                  << " -> " << to_string(to);
  return t.time_s(a, b);
}

}  // namespace autoddl::costmodel
