// Send/recv (a pipeline stage boundary): one transfer of S bytes from the group's first rank
// to its second. α-β: α + S·β. Across nodes the flow goes through one NIC (NCCL maps a
// GPU's peer traffic to its own NIC), so it is capped at one NIC's bandwidth, as costmodel's
// direct send_recv assumes.
#include "../transfers.hpp"
#include "algorithms.hpp"

namespace autoddl::sim::collectives {

void send_recv_direct(const RankGroup& g, double bytes, Fidelity /*f*/) {
  sg4::Host* src = g.hosts[0];
  sg4::Host* dst = g.hosts[1];
  const bool across_nodes = src->get_englobing_zone() != dst->get_englobing_zone();
  Transfers t;
  t.add(src, dst, bytes, across_nodes ? g.one_nic_bw_bytes_per_s : 0);
  t.wait_all();
}

bool pair_group(int ranks, int /*local_size*/) { return ranks == 2; }

}  // namespace autoddl::sim::collectives
