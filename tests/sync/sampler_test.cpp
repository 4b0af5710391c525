// AutoSync's sampler: every sample is a valid strategy, sparse gradients go to PS, the greedy
// load balancer balances, ordered_balanced keeps graph order, and a seed fixes the sample.
#include "autoddl/sync/sampler.hpp"

#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "autoddl/costmodel/zoo.hpp"
#include "tiny.hpp"

using namespace autoddl::sync;
using namespace autoddl::costmodel;

TEST_CASE("sampled strategies are valid and keep sparse gradients on PS", "[sync][sampler]") {
  std::vector<Variable> vars = extract_variables(build_zoo_model("ncf", {}));
  ClusterSpec c = test::test_cluster(4, 4);
  std::mt19937_64 rng(3);
  int partitioned = 0, ps = 0, ar = 0;
  for (int i = 0; i < 200; ++i) {
    Strategy s = sample_strategy(vars, c, {}, rng);
    validate_strategy(s, vars, c, "sample");
    for (size_t k = 0; k < vars.size(); ++k) {
      partitioned += s.vars[k].shards > 1 ? 1 : 0;
      for (const Synchronizer& p : s.vars[k].parts) {
        if (vars[k].sparse) CHECK(p.arch == Arch::ps);
        (p.arch == Arch::ps ? ps : ar) += 1;
        if (vars[k].bytes < 100e3) CHECK(s.vars[k].shards == 1);  // below the partition bound
      }
    }
  }
  CHECK(partitioned > 0);
  CHECK(ps > 0);
  CHECK(ar > 0);
}

// AutoSync's sample_partition_config draws the axis uniformly from VarItem.partitionable_axes
// (autosync-inference, autodist/strategy/auto/item.py): every axis longer than 1, axis 0 only
// for sparse or embedding variables. VGG16's conv kernels (out, in, 3, 3) and FC weights offer
// several axes; NCF's embedding tables only their rows.
TEST_CASE("the sampler partitions along any axis longer than 1 but embeddings along rows only",
          "[sync][sampler]") {
  ClusterSpec c = test::test_cluster(4, 2);
  SamplerOptions o;
  o.partition_lb_bytes = 0;
  o.partition_ub_bytes = 0;  // partition every variable that has an axis to split
  for (const char* model : {"vgg16", "ncf"}) {
    INFO(model);
    std::vector<Variable> vars = extract_variables(build_zoo_model(model, {}));
    std::mt19937_64 rng(5);
    std::set<int> axes_seen;
    for (int i = 0; i < 40; ++i) {
      Strategy s = sample_strategy(vars, c, o, rng);
      validate_strategy(s, vars, c, "sample");
      for (size_t k = 0; k < vars.size(); ++k) {
        const VarConfig& vc = s.vars[k];
        if (vc.shards == 1) continue;
        CHECK(vars[k].shape[static_cast<size_t>(vc.axis)] >= vc.shards);
        if (vars[k].sparse || vars[k].embedding) CHECK(vc.axis == 0);
        axes_seen.insert(vc.axis);
      }
    }
    CHECK(axes_seen.count(0) == 1);
    if (std::string(model) == "vgg16") {
      CHECK(axes_seen.count(1) == 1);
      CHECK(axes_seen.count(2) == 1);  // a kernel's height
    }
  }
}

TEST_CASE("a seed fixes the sampled strategy", "[sync][sampler]") {
  std::vector<Variable> vars = extract_variables(build_zoo_model("vgg16", {}));
  ClusterSpec c = test::test_cluster(4, 1);
  std::mt19937_64 a(9), b(9), other(10);
  Strategy sa = sample_strategy(vars, c, {}, a);
  CHECK(sa == sample_strategy(vars, c, {}, b));
  CHECK_FALSE(sa == sample_strategy(vars, c, {}, other));
}

TEST_CASE("greedy placement balances PS bytes, ordered_balanced keeps graph order",
          "[sync][sampler]") {
  std::vector<Variable> vars = extract_variables(build_zoo_model("resnet50", {}));
  ClusterSpec c = test::test_cluster(4, 1);
  SamplerOptions o;
  o.balancer = LoadBalancer::greedy;
  o.merge = MergeScheme::ordered_balanced;
  o.partition_lb_bytes = 1e18;  // no partitioning: whole variables
  std::mt19937_64 rng(1);
  for (int i = 0; i < 20; ++i) {
    Strategy s = sample_strategy(vars, c, o, rng);
    std::vector<double> load(4, 0.0);
    double largest = 0;
    int last_group = 0;
    for (size_t k = 0; k < vars.size(); ++k) {
      const Synchronizer& p = s.vars[k].parts[0];
      if (p.arch == Arch::ps) {
        load[static_cast<size_t>(p.server)] += vars[k].bytes;
        largest = std::max(largest, vars[k].bytes);
      } else {
        CHECK(p.group >= last_group);  // groups follow graph order
        last_group = p.group;
      }
    }
    // sorted greedy (LPT): the busiest server exceeds the idlest by at most one variable
    CHECK(*std::max_element(load.begin(), load.end()) - *std::min_element(load.begin(), load.end()) <=
          largest + 1e-9);
  }
}
