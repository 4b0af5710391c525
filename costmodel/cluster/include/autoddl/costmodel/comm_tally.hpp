// Communication tallied by collective kind: seconds, bytes each device puts on the wire, and
// the number of collectives. Reports need counts and bytes, not only time, so every boxing and
// gradient sync adds into one of these.
#pragma once
#include <array>

#include "autoddl/costmodel/collective.hpp"

namespace autoddl::costmodel {

struct CommTally {
  std::array<double, kCollectiveKindCount> time_s{};
  std::array<double, kCollectiveKindCount> bytes{};  // per device: bw_factor(p) · S
  std::array<double, kCollectiveKindCount> count{};  // double: scaled by micro-batch counts

  void add(CollectiveKind k, double t_s, double wire_bytes, double n = 1) {
    auto i = static_cast<size_t>(k);
    time_s[i] += t_s;
    bytes[i] += wire_bytes;
    count[i] += n;
  }
  double total_s() const {
    double t = 0;
    for (double x : time_s) t += x;
    return t;
  }
  CommTally& operator+=(const CommTally& o) {
    for (size_t i = 0; i < time_s.size(); ++i) {
      time_s[i] += o.time_s[i];
      bytes[i] += o.bytes[i];
      count[i] += o.count[i];
    }
    return *this;
  }
  CommTally scaled(double f) const {
    CommTally r = *this;
    for (size_t i = 0; i < time_s.size(); ++i) {
      r.time_s[i] *= f;
      r.bytes[i] *= f;
      r.count[i] *= f;
    }
    return r;
  }
};

}  // namespace autoddl::costmodel
