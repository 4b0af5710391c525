// AutoDist's resource_spec.yml and AutoSync's runtime files (autodist_records.hpp), read with
// mini_yaml. Keys AutoDist itself does not read, or reads only for SSH, are ignored; the ones the
// import uses are type-checked and named in errors.
#include <cmath>
#include <cstdio>
#include <set>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/sync/autodist_records.hpp"
#include "mini_yaml.hpp"

namespace autoddl::sync {

using nlohmann::json;

AutodistResourceSpec parse_resource_spec(const std::string& yaml, const std::string& source) {
  const json j = parse_mini_yaml(yaml, source);
  if (!j.is_object()) throw InputError(source, "(top level)", "must be a mapping with 'nodes:'");
  if (!j.contains("nodes") || !j["nodes"].is_array() || j["nodes"].empty())
    throw InputError(source, "nodes", "missing or not a non-empty list");
  AutodistResourceSpec spec;
  std::set<std::string> addresses;
  for (size_t i = 0; i < j["nodes"].size(); ++i) {
    const json& n = j["nodes"][i];
    const std::string at = "nodes[" + std::to_string(i) + "]";
    if (!n.is_object()) throw InputError(source, at, "must be a mapping (address, gpus, ...)");
    AutodistNode node;
    if (!n.contains("address") || !n["address"].is_string() || n["address"].get<std::string>().empty())
      throw InputError(source, at + ".address", "missing or not a string");
    node.address = n["address"].get<std::string>();
    if (!addresses.insert(node.address).second)
      throw InputError(source, at + ".address", "'" + node.address + "' is listed twice");
    if (n.contains("gpus") && !n["gpus"].is_null()) {
      if (!n["gpus"].is_array()) throw InputError(source, at + ".gpus", "must be a list of GPU indices");
      std::set<int64_t> seen;
      for (const json& g : n["gpus"]) {
        if (!g.is_number_integer() || !json_int_in(g, 0, 1 << 20))
          throw InputError(source, at + ".gpus", "'" + g.dump() + "' is not a GPU index (an integer >= 0)");
        if (!seen.insert(g.get<int64_t>()).second)
          throw InputError(source, at + ".gpus", "GPU " + g.dump() + " is listed twice");
        node.gpus.push_back(g.get<int>());
      }
    }
    if (n.contains("chief") && !n["chief"].is_null()) {
      if (!n["chief"].is_boolean()) throw InputError(source, at + ".chief", "must be true or false");
      node.chief = n["chief"].get<bool>();
    }
    if (n.contains("network_bandwidth") && !n["network_bandwidth"].is_null()) {
      const json& b = n["network_bandwidth"];
      if (!b.is_number() || !(b.get<double>() > 0) || !std::isfinite(b.get<double>()))
        throw InputError(source, at + ".network_bandwidth", "must be a number > 0 (Gbit/s)");
      node.network_bandwidth_gbps = b.get<double>();
    }
    spec.nodes.push_back(std::move(node));
  }
  return spec;
}

AutodistResourceSpec load_resource_spec(const std::string& path) {
  return parse_resource_spec(read_text_file(path), path);
}

std::string resource_spec_yaml(const costmodel::ClusterSpec& c, const std::vector<std::string>& hosts) {
  std::string out = "# " + c.name + ": " + std::to_string(c.nodes) + " nodes x " + std::to_string(c.gpus_per_node) +
                    " GPUs (written by autoddl; ssh settings are yours to add)\nnodes:\n";
  const double gbps = c.inter.nics_per_node * c.inter.nic_bw_bytes_per_s * 8 / 1e9;
  char bw[32];
  std::snprintf(bw, sizeof bw, "%g", gbps);
  for (int n = 0; n < c.nodes; ++n) {
    out += "  - address: " + hosts.at(static_cast<size_t>(n)) + "\n    gpus: [";
    for (int g = 0; g < c.gpus_per_node; ++g) out += (g ? ", " : "") + std::to_string(g);
    out += "]\n";
    if (n == 0) out += "    chief: true\n";
    if (gbps > 0) out += std::string("    network_bandwidth: ") + bw + "\n";
  }
  return out;
}

std::vector<std::string> resource_spec_hosts(const AutodistResourceSpec& spec, const costmodel::ClusterSpec& c,
                                             const std::string& source) {
  if (static_cast<int>(spec.nodes.size()) != c.nodes)
    throw InputError(source, "nodes",
                     std::to_string(spec.nodes.size()) + " node(s); cluster " + c.name + " has " +
                         std::to_string(c.nodes) + " (give a cluster with the spec's node count)");
  std::vector<std::string> hosts;
  for (size_t i = 0; i < spec.nodes.size(); ++i) {
    const AutodistNode& n = spec.nodes[i];
    if (static_cast<int>(n.gpus.size()) != c.gpus_per_node)
      throw InputError(source, "nodes[" + std::to_string(i) + "].gpus",
                       std::to_string(n.gpus.size()) + " GPU(s) on " + n.address + "; cluster " + c.name + " has " +
                           std::to_string(c.gpus_per_node) + " per node (autoddl clusters have the same GPUs on every node)");
    hosts.push_back(n.address);
  }
  return hosts;
}

AutodistRuntime parse_runtime(const std::string& yaml, const std::string& source) {
  const json j = parse_mini_yaml(yaml, source);
  if (!j.is_object()) throw InputError(source, "(top level)", "must be a mapping with 'average:' or 'runtime:'");
  auto seconds = [&](const json& v, const std::string& field) {
    if (!v.is_number() || !std::isfinite(v.get<double>()) || !(v.get<double>() > 0))
      throw InputError(source, field, "'" + v.dump() + "' is not a time in seconds (a number > 0)");
    return v.get<double>();
  };
  AutodistRuntime r;
  if (j.contains("runtime") && !j["runtime"].is_null()) {
    const json& v = j["runtime"];
    if (v.is_array()) {
      if (v.empty()) throw InputError(source, "runtime", "an empty list");
      for (size_t i = 0; i < v.size(); ++i) r.runtimes_s.push_back(seconds(v[i], "runtime[" + std::to_string(i) + "]"));
    } else {
      r.runtimes_s.push_back(seconds(v, "runtime"));
    }
  }
  if (j.contains("average") && !j["average"].is_null()) {
    r.runtime_s = seconds(j["average"], "average");
    if (r.runtimes_s.empty()) r.runtimes_s.push_back(r.runtime_s);
  } else if (!r.runtimes_s.empty()) {
    double sum = 0;
    for (double t : r.runtimes_s) sum += t;
    r.runtime_s = sum / static_cast<double>(r.runtimes_s.size());
  } else {
    throw InputError(source, "average", "missing (give 'average: <seconds>' or 'runtime: [<seconds>, ...]')");
  }
  return r;
}

}  // namespace autoddl::sync
