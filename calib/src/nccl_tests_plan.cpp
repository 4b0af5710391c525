// nccl-tests commands for a plan's collectives (see nccl_tests_plan.hpp). nccl-tests splits its
// ranks into groups with NCCL_TESTS_SPLIT ("MOD k": color = rank % k; "DIV k": rank / k), and
// prints each rank's group, from which the parser counts the groups per node (nccl_tests_parser).
// A mesh dim of size g and stride s over row-major GPU ids (costmodel/sbp/src/mesh.cpp) has its
// groups inside blocks of s·g consecutive ranks: across nodes, launching one block with
// "MOD s" reproduces both the group shape and how many groups share a node's NICs. Inside a
// node the cost model prices each group alone (groups_per_node 1), so one group of g ranks runs.
#include "autoddl/calib/nccl_tests_plan.hpp"

#include <algorithm>
#include <cstdio>

namespace autoddl::calib {

namespace {

int64_t pow2_at_most(double bytes) {
  int64_t p = 8;  // nccl-tests' smallest useful size (one element of 8 bytes)
  while (static_cast<double>(p) * 2 <= bytes) p *= 2;
  return p;
}

int64_t pow2_at_least(double bytes) {
  int64_t p = 8;
  while (static_cast<double>(p) < bytes) p *= 2;
  return p;
}

// nccl-tests' -b/-e with a K/M/G suffix where exact.
std::string size_arg(int64_t b) {
  const char* suffix[] = {"", "K", "M", "G"};
  int u = 0;
  while (u < 3 && b >= 1024 && b % 1024 == 0) {
    b /= 1024;
    ++u;
  }
  return std::to_string(b) + suffix[u];
}

}  // namespace

std::vector<NcclTestsCommand> nccl_tests_commands(const std::vector<costmodel::CollectiveNeed>& needs,
                                                  int gpus_per_node) {
  std::vector<NcclTestsCommand> out;
  for (const costmodel::CollectiveNeed& n : needs) {
    if (!n.calibration_applies) continue;
    NcclTestsCommand c;
    const costmodel::CollectiveInfo& info = costmodel::collective_info(n.kind);
    c.program = std::string(info.nccl_tests_name);
    char what[256];
    std::snprintf(what, sizeof what, "%s over mesh dim %d: %d ranks, %d per node, %d group%s per node%s",
                  std::string(info.name).c_str(), n.mesh_dim, n.group.ranks, n.group.ranks_per_node,
                  n.groups_per_node, n.groups_per_node == 1 ? "" : "s",
                  n.crosses_nodes ? ", across nodes" : ", inside a node");
    c.what = what;
    if (n.crosses_nodes) {
      c.ranks = n.stride * n.group.ranks;
      if (n.stride > 1) c.env = "NCCL_TESTS_SPLIT=MOD " + std::to_string(n.stride);
    } else {
      c.ranks = n.group.ranks;
    }
    c.ranks_per_node = std::min(c.ranks, gpus_per_node);
    if (c.ranks % c.ranks_per_node != 0) {
      c.note = "the block of " + std::to_string(c.ranks) + " ranks does not fill whole nodes of " +
               std::to_string(gpus_per_node) + " GPUs; check the groups per node the fit reports";
    }
    c.min_bytes = pow2_at_most(n.min_bytes);
    c.max_bytes = pow2_at_least(n.max_bytes);
    c.command = "mpirun -np " + std::to_string(c.ranks) + " -N " + std::to_string(c.ranks_per_node);
    if (!c.env.empty()) c.command += " -x \"" + c.env + "\"";
    c.command += " " + c.program + " -b " + size_arg(c.min_bytes) + " -e " + size_arg(c.max_bytes) +
                 " -f 2 -g 1";
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace autoddl::calib
