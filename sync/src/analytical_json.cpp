#include "autoddl/sync/analytical.hpp"

namespace autoddl::sync {

nlohmann::json evaluation_to_json(const Evaluation& e) {
  nlohmann::json servers = nlohmann::json::array(), groups = nlohmann::json::array();
  for (const ServerTerms& s : e.servers) {
    servers.push_back({{"node", s.node}, {"shards", s.shards}, {"in_bytes", s.bytes_in},
                       {"out_bytes", s.bytes_out}, {"transmission_s", s.transmission_s},
                       {"overhead_s", s.overhead_s}, {"local_s", s.local_s}, {"time_s", s.time_s},
                       {"end_s", s.end_s}});
  }
  for (const GroupTerms& g : e.groups) {
    groups.push_back({{"group", g.group}, {"members", g.members}, {"dense_bytes", g.dense_bytes},
                      {"sparse_gather_bytes", g.sparse_gather_bytes}, {"algorithm", g.algorithm},
                      {"transmission_s", g.transmission_s}, {"overhead_s", g.overhead_s}, {"cast_s", g.cast_s},
                      {"time_s", g.time_s}, {"ready_s", g.ready_s}, {"end_s", g.end_s}});
  }
  return {{"workers", e.workers},         {"forward_s", e.forward_s},
          {"backward_s", e.backward_s},   {"ps_max_s", e.ps_max_s},
          {"ps_sum_s", e.ps_sum_s},       {"ar_max_s", e.ar_max_s},
          {"ar_sum_s", e.ar_sum_s},       {"worker_nic_s", e.worker_nic_s},
          {"sync_end_s", e.sync_end_s},   {"exposed_sync_s", e.exposed_sync_s},
          {"iteration_s", e.iteration_s}, {"ps_duplex_end_s", e.ps_duplex_end_s},
          {"nic_ps_max_s", e.nic_ps_max_s}, {"nic_max_s", e.nic_max_s},
          {"duplex_iteration_s", e.duplex_iteration_s}, {"ps_lane_end_s", e.ps_lane_end_s},
          {"lane_iteration_s", e.lane_iteration_s}, {"servers", servers},
          {"groups", groups}};
}

}  // namespace autoddl::sync
