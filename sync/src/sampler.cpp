// The sampler is described in sampler.hpp's header comment.
#include "autoddl/sync/sampler.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace autoddl::sync {

namespace {

template <class T>
T pick(std::mt19937_64& rng, std::initializer_list<T> options) {
  std::uniform_int_distribution<size_t> d(0, options.size() - 1);
  return *(options.begin() + d(rng));
}

int uniform_int(std::mt19937_64& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}

struct Slot {  // one whole variable or shard: where its synchronizer lives and its bytes
  Synchronizer* sync;
  double bytes;
};

void place_ps(std::vector<Slot>& ps, int nodes, LoadBalancer lb, std::mt19937_64& rng) {
  std::vector<double> load(static_cast<size_t>(nodes), 0.0);
  if (lb == LoadBalancer::greedy) {
    std::stable_sort(ps.begin(), ps.end(), [](const Slot& a, const Slot& b) { return a.bytes > b.bytes; });
    for (Slot& s : ps) {
      int best = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
      s.sync->server = best;
      load[static_cast<size_t>(best)] += s.bytes;
    }
    return;
  }
  double total = 0;
  for (const Slot& s : ps) total += s.bytes;
  const double unit = ps.empty() ? 1 : std::max(1.0, total / static_cast<double>(ps.size()));
  const double target = total / nodes;
  for (Slot& s : ps) {
    std::vector<double> w(load.size());
    for (size_t n = 0; n < load.size(); ++n) w[n] = std::exp(std::min(50.0, (target - load[n]) / unit));
    int node = static_cast<int>(std::discrete_distribution<size_t>(w.begin(), w.end())(rng));
    s.sync->server = node;
    load[static_cast<size_t>(node)] += s.bytes;
  }
}

void group_ar(std::vector<Slot>& ar, int max_groups, MergeScheme m, std::mt19937_64& rng) {
  if (ar.empty()) return;
  const int groups = uniform_int(rng, 1, std::max(1, std::min<int>(max_groups, static_cast<int>(ar.size()))));
  if (m == MergeScheme::chunk) {
    const int chunk = static_cast<int>((ar.size() + groups - 1) / groups);
    for (size_t i = 0; i < ar.size(); ++i) ar[i].sync->group = static_cast<int>(i) / chunk;
  } else if (m == MergeScheme::random) {
    std::vector<int> g(ar.size());
    for (size_t i = 0; i < ar.size(); ++i) g[i] = i < static_cast<size_t>(groups) ? static_cast<int>(i) : uniform_int(rng, 0, groups - 1);
    std::shuffle(g.begin(), g.end(), rng);
    for (size_t i = 0; i < ar.size(); ++i) ar[i].sync->group = g[i];
  } else {
    double total = 0;
    for (const Slot& s : ar) total += s.bytes;
    const double per_group = total / groups;
    int group = 0;
    double filled = 0;
    for (Slot& s : ar) {
      s.sync->group = group;
      filled += s.bytes;
      if (filled >= per_group && group < groups - 1) {
        ++group;
        filled = 0;
      }
    }
  }
}

// AutoSync's VarItem.partitionable_axes (autosync-inference, autodist/strategy/auto/item.py):
// the axes longer than 1, or only axis 0 for a sparse or embedding variable (its rows are what
// a lookup gathers); here also only axes that allow 2 shards under max_shards.
std::vector<int> partitionable_axes(const Variable& v, int max_shards) {
  std::vector<int> axes;
  if (max_shards < 2) return axes;
  for (size_t a = 0; a < v.shape.size(); ++a) {
    if (v.shape[a] > 1) axes.push_back(static_cast<int>(a));
    if (v.sparse || v.embedding) break;
  }
  return axes;
}

}  // namespace

Strategy sample_strategy(const std::vector<Variable>& vars, const costmodel::ClusterSpec& c,
                         const SamplerOptions& o, std::mt19937_64& rng) {
  const LoadBalancer lb = o.balancer ? *o.balancer : pick(rng, {LoadBalancer::greedy, LoadBalancer::christy});
  const MergeScheme merge =
      o.merge ? *o.merge : pick(rng, {MergeScheme::ordered_balanced, MergeScheme::chunk, MergeScheme::random});
  Strategy s{"sampled", "", {}};
  s.vars.reserve(vars.size());
  auto draw = [&](const Variable& v) {
    Synchronizer sy;
    sy.arch = v.sparse ? Arch::ps : pick(rng, {Arch::ps, Arch::all_reduce});
    if (sy.arch == Arch::ps) {
      sy.local_replication = c.gpus_per_node > 1 && pick(rng, {false, true});
    } else {
      sy.compressor = pick(rng, {Compressor::none, Compressor::fp16});
    }
    return sy;
  };
  for (const Variable& v : vars) {
    VarConfig vc{v.name, 0, 1, false, {}};
    const std::vector<int> axes = partitionable_axes(v, o.max_shards);
    bool partition = !axes.empty() && v.bytes >= o.partition_lb_bytes &&
                     (v.bytes >= o.partition_ub_bytes || pick(rng, {false, true}));
    if (partition) {
      vc.axis = axes[static_cast<size_t>(uniform_int(rng, 0, static_cast<int>(axes.size()) - 1))];
      const int64_t extent = v.shape[static_cast<size_t>(vc.axis)];
      vc.shards = uniform_int(rng, 2, static_cast<int>(std::min<int64_t>(extent, o.max_shards)));
      vc.uneven = extent % vc.shards != 0;
    }
    for (int i = 0; i < vc.shards; ++i) vc.parts.push_back(draw(v));
    s.vars.push_back(std::move(vc));
  }
  std::vector<Slot> ps, ar;
  for (size_t k = 0; k < s.vars.size(); ++k) {
    VarConfig& vc = s.vars[k];
    for (int i = 0; i < vc.shards; ++i) {
      Slot slot{&vc.parts[static_cast<size_t>(i)], vars[k].bytes * shard_fraction(vars[k], vc, i)};
      (slot.sync->arch == Arch::ps ? ps : ar).push_back(slot);
    }
  }
  place_ps(ps, c.nodes, lb, rng);
  group_ar(ar, o.max_groups, merge, rng);
  return s;
}

}  // namespace autoddl::sync
