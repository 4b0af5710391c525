// Point-to-point transfers and their bookkeeping: the one place that issues Comm::sendto_async,
// keeps every activity referenced until it completes, waits for a batch (SimGrid 3.32 has no
// ActivitySet; an upgrade to >= 3.35 touches only transfers.cpp), and accounts bytes per link
// and events for SimResult.
#pragma once
#include <cstdint>
#include <unordered_map>
#include <vector>

#include <simgrid/s4u.hpp>

namespace autoddl::sim {

namespace sg4 = simgrid::s4u;

// A batch of concurrent transfers, started as they are added and waited on together.
class Transfers {
 public:
  void add(sg4::Host* src, sg4::Host* dst, double bytes);
  void wait_all();
  // Waits for one transfer, removes it and returns its index (in the order of add, among the
  // transfers still pending).
  size_t wait_any();
  size_t size() const { return comms_.size(); }

 private:
  std::vector<sg4::CommPtr> comms_;
};

// Sum of the link latencies on the route src -> dst (cached per pair).
double route_latency_s(sg4::Host* src, sg4::Host* dst);
// Waits `seconds` of pure latency (no resource used): flow fidelity's remaining α terms.
void wait_latency(double seconds);
// Runs `flops` on the current actor's host.
void compute_flops(double flops);

// Per-link bytes and activity count of the simulation running in this process.
struct LinkBytes {
  sg4::Link* link;
  double bytes;
};
class NetworkStats {
 public:
  static NetworkStats& current();
  void record_transfer(sg4::Host* src, sg4::Host* dst, double bytes);
  void count_event() { ++events_; }
  int64_t events() const { return events_; }
  std::vector<LinkBytes> link_bytes() const;

 private:
  struct Route {
    std::vector<int> links;  // indices into links_
    double latency_s = 0;
  };
  const Route& route(sg4::Host* src, sg4::Host* dst);
  friend double route_latency_s(sg4::Host* src, sg4::Host* dst);

  int64_t events_ = 0;
  std::vector<sg4::Link*> links_;
  std::vector<double> bytes_;
  std::unordered_map<const sg4::Link*, int> link_index_;
  std::unordered_map<uint64_t, Route> routes_;  // key: src id << 32 | dst id
  std::unordered_map<const sg4::Host*, uint32_t> host_id_;
};

}  // namespace autoddl::sim
