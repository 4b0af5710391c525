// Region moves: a connected region of coordinates that all split (or hold partial sums) over
// one mesh dim d is set to replicate over d at once, every other dim kept. Crosses what
// neighbourhoods and path windows cannot: a transformer's attention block (q, k, v with their
// bias and head reshapes, scores, softmax, dropout, context, merge: a diamond of 17 ops) whose
// heads are split over the node dim and would be faster replicated there, data parallel within
// the node; moving any part alone pays boxing at its new borders. The region grows breadth-first
// from a coordinate (at most kMaxRegion), every prefix of the growth order is priced by delta,
// and the best strictly improving prefix is applied. A region that came back empty is not priced
// again while nothing it reads moved (still_empty), nor an identical one (the check memo).
#include <algorithm>
#include <map>

#include "descent.hpp"

namespace autoddl::search {

namespace {

bool all_broadcast_on(const costmodel::OpSignature& s, int d) {
  for (int i = 0; i < s.n_in; ++i) {
    if (!s.in[i].dims[d].is_broadcast()) return false;
  }
  for (int j = 0; j < s.n_out; ++j) {
    if (!s.out[j].dims[d].is_broadcast()) return false;
  }
  return true;
}

// The signature with dim d blanked (every port's SBP there replaced by a marker), and the ZeRO
// flag: two choices with equal keys differ only on dim d.
std::vector<int8_t> key_without(const costmodel::OpSignature& s, int d, int ndims, uint8_t zero) {
  std::vector<int8_t> key{static_cast<int8_t>(zero)};
  auto add = [&](const costmodel::NdSbp& x) {
    for (int e = 0; e < ndims; ++e) {
      if (e == d) {
        key.insert(key.end(), {-1, -1});
      } else {
        key.insert(key.end(), {static_cast<int8_t>(x.dims[e].kind), x.dims[e].axis});
      }
    }
  };
  for (int i = 0; i < s.n_in; ++i) {
    add(s.in[i]);
    add(s.in_grad[i]);
  }
  for (int j = 0; j < s.n_out; ++j) {
    add(s.out[j]);
    add(s.out_grad[j]);
  }
  return key;
}

}  // namespace

void Descent::build_replicas() {
  const int ndims = static_cast<int>(t_.sbp_shape().size());
  replica_.assign(static_cast<size_t>(ndims) * t_.classes(), {});
  for (int op = 0; op < t_.ops(); ++op) {
    const int k = t_.class_of(op);
    const OpClass& cls = t_.cls(op);
    for (int d = 0; d < ndims; ++d) {
      std::vector<int>& r = replica_[static_cast<size_t>(d) * t_.classes() + k];
      if (!r.empty()) continue;
      r.assign(cls.n_choices, -1);
      std::map<std::vector<int8_t>, int> broadcast_on_d;
      for (int c = 0; c < cls.n_choices; ++c) {
        const costmodel::OpSignature& s = cls.sigs[cls.sig_of[c]];
        if (all_broadcast_on(s, d)) broadcast_on_d.emplace(key_without(s, d, ndims, cls.zero[c]), c);
      }
      for (int c = 0; c < cls.n_choices; ++c) {
        const costmodel::OpSignature& s = cls.sigs[cls.sig_of[c]];
        if (all_broadcast_on(s, d)) continue;  // already replicated over d: -1, nothing to move
        auto it = broadcast_on_d.find(key_without(s, d, ndims, cls.zero[c]));
        if (it != broadcast_on_d.end()) r[c] = it->second;
      }
    }
  }
}

int Descent::replica_of(int k, int d) const {
  int n = 0;
  const int* ops = members(k, n);
  const int c = a_.choice(ops[0]);
  for (int x = 1; x < n; ++x) {
    if (a_.choice(ops[x]) != c) return -1;  // a tied coordinate split in two: left alone
  }
  return replica_[static_cast<size_t>(d) * t_.classes() + t_.class_of(ops[0])][c];
}

bool Descent::regions() {
  bool any = false;
  const int ndims = static_cast<int>(t_.sbp_shape().size());
  for (int d = 0; d < ndims; ++d) {
    for (int u = 0; u < co_.size(); ++u) {
      if ((u & 63) == 0 && out_of_time()) return any;
      if (replica_of(u, d) < 0) continue;
      // Regions grow from their borders only (a neighbour already replicated over d, or with no
      // replica): one that splits over d everywhere (plain data parallel) has its borders at the
      // model's ends, and an attention block at the ops that read or feed the layer norms.
      bool border = false;
      for (int x = co_.nbr_begin[u]; x < co_.nbr_begin[u + 1] && !border; ++x) border = replica_of(co_.nbrs[x], d) < 0;
      if (border) any |= region_move(u, d);
    }
  }
  return any;
}

bool Descent::region_move(int u, int d) {
  // Breadth-first growth through coordinates that have a replica over d.
  ++region_pass_;
  int n = 0;
  region_[n++] = u;
  region_seen_[u] = region_pass_;
  for (int head = 0; head < n && n < kMaxRegion; ++head) {
    const int v = region_[head];
    for (int x = co_.nbr_begin[v]; x < co_.nbr_begin[v + 1] && n < kMaxRegion; ++x) {
      const int w = co_.nbrs[x];
      if (region_seen_[w] == region_pass_ || replica_of(w, d) < 0) continue;
      region_seen_[w] = region_pass_;
      region_[n++] = w;
    }
  }
  if (n < 2) return false;  // one coordinate: a plain step already tried it
  long& empty_at_u = region_empty_at_[static_cast<size_t>(d) * co_.size() + u];
  if (still_empty(region_, n, empty_at_u, true)) return false;
  // The region's terms in growth order (a prefix's terms are a prefix of them).
  ++stamp_;
  uterms_.clear();
  for (int j = 0; j < n; ++j) {
    pos_[region_[j]] = j;
    int nt = 0;
    const int* tm = terms(region_[j], nt);
    for (int x = 0; x < nt; ++x) {
      if (term_stamp_[tm[x]] == stamp_) continue;
      term_stamp_[tm[x]] = stamp_;
      uterms_.push_back(tm[x]);
    }
    region_terms_[j] = static_cast<int>(uterms_.size());  // terms of the prefix ending at j
  }
  const bool memo = memo_on();
  bool seen = false;
  if (memo) {
    check_key(3 + d, region_, n);
    seen = memo_lookup(false) != 0;
  }
  for (int j = 0; j < n; ++j) pos_[region_[j]] = -1;
  if (seen) {
    ++stats_.checks_reused;
    return false;
  }
  // Price every prefix of the growth order, keep the best strictly improving one.
  int n_ops = 0, best_ops = 0, best_terms = 0;
  double best = -eps();
  for (int j = 0; j < n; ++j) {
    int m = 0;
    const int* ops = members(region_[j], m);
    const int c = replica_of(region_[j], d);
    for (int x = 0; x < m; ++x) {
      jops_[n_ops] = ops[x];
      wnew_[n_ops++] = c;
    }
    if (j == 0) continue;
    const double delta = a_.delta(jops_.data(), wnew_.data(), n_ops, uterms_.data(), region_terms_[j]);
    if (delta < best) {
      best = delta;
      best_ops = n_ops;
      best_terms = region_terms_[j];
    }
  }
  if (best_ops == 0) {
    empty_at_u = empty_at(true);
    if (memo) memo_store(false);
    return false;
  }
  apply(jops_.data(), wnew_.data(), best_ops, uterms_.data(), best_terms);
  empty_at_u = -1;
  ++stats_.region_moves;
  return true;
}

}  // namespace autoddl::search
