// Boxing costs: the 1-D table and the nd shortest path (see boxing.hpp). The all-pairs table
// per tensor shape is built with Floyd–Warshall over the tensor's valid nd-SBPs, comparing
// (time, steps) so that among equally fast conversions the one with fewer collectives wins.
#include "autoddl/costmodel/boxing.hpp"

#include <limits>

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

BoxingTable::BoxingTable(const DeviceMesh& mesh, const Shape& shape, double logical_bytes) {
  const int nd = mesh.ndims();
  std::vector<int> sizes = mesh.shape();
  NdSbp cur;
  cur.ndims = static_cast<uint8_t>(nd);
  enumerate_states(nd, static_cast<int>(shape.size()), 0, cur, sizes.data(), shape, states_);
  n_ = static_cast<int>(states_.size());
  const double inf = std::numeric_limits<double>::infinity();
  time_.assign(static_cast<size_t>(n_) * n_, inf);
  next_.assign(static_cast<size_t>(n_) * n_, -1);
  hop_.assign(static_cast<size_t>(n_) * n_, BoxingStep{});
  std::vector<int> steps(static_cast<size_t>(n_) * n_, std::numeric_limits<int>::max() / 4);
  for (int i = 0; i < n_; ++i) {
    time_[i * n_ + i] = 0;
    steps[i * n_ + i] = 0;
    next_[i * n_ + i] = i;
    for (int j = 0; j < n_; ++j) {
      if (i == j) continue;
      int diff = -1, ndiff = 0;
      for (int d = 0; d < nd; ++d) {
        if (!(states_[i].dims[d] == states_[j].dims[d])) {
          diff = d;
          ++ndiff;
        }
      }
      if (ndiff != 1) continue;
      // The group tensor of dim `diff`: split factors of the other dims divide |T|.
      double group_bytes = logical_bytes;
      for (int d = 0; d < nd; ++d) {
        if (d != diff && states_[i].dims[d].is_split()) group_bytes /= sizes[d];
      }
      BoxingStep st;
      if (boxing_step_1d(mesh, diff, states_[i].dims[diff], states_[j].dims[diff], group_bytes, st)) {
        hop_[i * n_ + j] = st;
        time_[i * n_ + j] = st.time_s;
        steps[i * n_ + j] = 1;
      } else {
        hop_[i * n_ + j] = BoxingStep{diff, CollectiveKind::all_reduce, 0, 0, -1};  // local step
        time_[i * n_ + j] = 0;
        steps[i * n_ + j] = 0;
      }
      next_[i * n_ + j] = j;
    }
  }
  // Floyd–Warshall on (time, collective steps), relative tolerance on time.
  for (int k = 0; k < n_; ++k) {
    for (int i = 0; i < n_; ++i) {
      double tik = time_[i * n_ + k];
      if (tik == inf) continue;
      for (int j = 0; j < n_; ++j) {
        double t = tik + time_[k * n_ + j];
        int s = steps[i * n_ + k] + steps[k * n_ + j];
        double cur_t = time_[i * n_ + j];
        bool better = t < cur_t * (1 - 1e-12) ||
                      (t <= cur_t * (1 + 1e-12) && s < steps[i * n_ + j]);
        if (better) {
          time_[i * n_ + j] = t;
          steps[i * n_ + j] = s;
          next_[i * n_ + j] = next_[i * n_ + k];
        }
      }
    }
  }
}

int BoxingTable::index_of(const NdSbp& s) const {
  for (int i = 0; i < n_; ++i) {
    if (states_[i] == s) return i;
  }
  return -1;
}

std::vector<BoxingStep> BoxingTable::path(int from, int to) const {
  std::vector<BoxingStep> out;
  AUTODDL_CHECK(from >= 0 && to >= 0 && from < n_ && to < n_) << "boxing state out of range";
  int cur = from;
  int guard = 0;
  while (cur != to) {
    int nxt = next_[cur * n_ + to];
    AUTODDL_CHECK(nxt >= 0) << "no boxing path";
    const BoxingStep& h = hop_[cur * n_ + nxt];
    if (h.time_s >= 0) out.push_back(h);
    cur = nxt;
    AUTODDL_CHECK(++guard <= n_) << "boxing path loops";
  }
  return out;
}

void BoxingTable::tally(int from, int to, CommTally& tally, double times) const {
  if (from == to) return;
  for (const BoxingStep& st : path(from, to)) {
    tally.add(st.kind, st.time_s * times, st.wire_bytes * times, times);
  }
}

const BoxingTable& BoxingCache::get(const Shape& shape, double logical_bytes) {
  auto key = std::make_pair(shape, logical_bytes);
  auto it = tables_.find(key);
  if (it == tables_.end()) {
    it = tables_.emplace(key, std::make_unique<BoxingTable>(mesh_, shape, logical_bytes)).first;
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
