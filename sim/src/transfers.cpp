// Transfers, latency waits and per-link accounting (see transfers.hpp).
#include "transfers.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

XBT_LOG_NEW_DEFAULT_SUBCATEGORY(autoddl_sim_transfers, autoddl_sim, "autoddl: point-to-point transfers");

namespace autoddl::sim {

void Transfers::add(sg4::Host* src, sg4::Host* dst, double bytes) {
  // At least one byte: SimGrid 3.32 mishandles 0-byte host-to-host comms (they finish late,
  // measured: a 0-byte 64-rank ring all-reduce took 80x its latency). One byte costs α + 1/B.
  auto size = static_cast<uint64_t>(std::max<long long>(1, std::llround(bytes)));
  XBT_DEBUG("%s -> %s: %llu bytes", src->get_cname(), dst->get_cname(),
            static_cast<unsigned long long>(size));
  NetworkStats::current().record_transfer(src, dst, static_cast<double>(size));
  comms_.push_back(sg4::Comm::sendto_async(src, dst, size));
}

void Transfers::wait_all() {
  // 3.32: Comm::wait_all; 3.35+: ActivitySet::wait_all.
  sg4::Comm::wait_all(comms_);
  comms_.clear();
}

size_t Transfers::wait_any() {
  // 3.32: Comm::wait_any; 3.35+: ActivitySet::wait_any.
  const ssize_t i = sg4::Comm::wait_any(comms_);
  xbt_assert(i >= 0, "wait_any on an empty batch");
  comms_.erase(comms_.begin() + i);
  return static_cast<size_t>(i);
}

double route_latency_s(sg4::Host* src, sg4::Host* dst) {
  return NetworkStats::current().route(src, dst).latency_s;
}

void wait_latency(double seconds) {
  if (seconds <= 0) return;
  NetworkStats::current().count_event();
  sg4::this_actor::sleep_for(seconds);
}

void compute_flops(double flops) {
  if (flops <= 0) return;
  NetworkStats::current().count_event();
  sg4::this_actor::execute(flops);
}

NetworkStats& NetworkStats::current() {
  // One simulation per process (simulate.hpp), hence one set of statistics.
  static NetworkStats stats;
  return stats;
}

const NetworkStats::Route& NetworkStats::route(sg4::Host* src, sg4::Host* dst) {
  auto id = [this](const sg4::Host* h) {
    auto [it, added] = host_id_.try_emplace(h, static_cast<uint32_t>(host_id_.size()));
    return static_cast<uint64_t>(it->second);
  };
  uint64_t key = id(src) << 32 | id(dst);
  auto it = routes_.find(key);
  if (it != routes_.end()) return it->second;
  std::vector<sg4::Link*> links;
  Route r;
  src->route_to(dst, links, &r.latency_s);
  for (sg4::Link* l : links) {
    auto [li, added] = link_index_.try_emplace(l, static_cast<int>(links_.size()));
    if (added) {
      links_.push_back(l);
      bytes_.push_back(0);
    }
    r.links.push_back(li->second);
  }
  return routes_.emplace(key, std::move(r)).first->second;
}

void NetworkStats::record_transfer(sg4::Host* src, sg4::Host* dst, double bytes) {
  ++events_;
  for (int l : route(src, dst).links) bytes_[static_cast<size_t>(l)] += bytes;
}

std::vector<LinkBytes> NetworkStats::link_bytes() const {
  std::vector<LinkBytes> out;
  out.reserve(links_.size());
  for (size_t i = 0; i < links_.size(); ++i) out.push_back({links_[i], bytes_[i]});
  return out;
}

}  // namespace autoddl::sim
