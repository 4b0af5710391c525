// Send/recv (a pipeline stage boundary): one transfer of S bytes from the group's first rank
// to its second. α-β: α + S·β; across nodes the one flow goes through one NIC (platform.hpp),
// as costmodel's direct send_recv assumes.
#include "../transfers.hpp"
#include "algorithms.hpp"

namespace autoddl::sim::collectives {

void send_recv_direct(const RankGroup& g, double bytes, Fidelity /*f*/) {
  Transfers t;
  t.add(g.hosts[0], g.hosts[1], bytes);
  t.wait_all();
}

bool pair_group(int ranks, int /*local_size*/) { return ranks == 2; }

}  // namespace autoddl::sim::collectives
