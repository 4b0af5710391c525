// Strategy <-> AutoDist Strategy message (autodist.hpp has the field map). Exporting never
// fails on a valid strategy; what AutoDist cannot say (tree and hierarchical all-reduce) is
// written as its nearest spec with a note. Importing refuses what autoddl cannot price.
#include "autoddl/sync/autodist.hpp"

#include <map>

#include "autoddl/costmodel/error.hpp"

namespace autoddl::sync {

using nlohmann::json;

std::vector<std::string> default_autodist_hosts(int nodes) {
  std::vector<std::string> out;
  for (int i = 0; i < nodes; ++i) out.push_back("node" + std::to_string(i));
  return out;
}

namespace {

json synchronizer_to_autodist(const Synchronizer& p, const std::vector<std::string>& hosts, int& approximated) {
  if (p.arch == Arch::ps) {
    return {{"PSSynchronizer",
             {{"reduction_destination", hosts.at(static_cast<size_t>(p.server)) + ":CPU:0"},
              {"local_replication", p.local_replication},
              {"sync", p.sync},
              {"staleness", p.staleness}}}};
  }
  const char* spec = "NCCL";
  if (p.algorithm == ArAlgorithm::ring) spec = "RING";
  if (p.algorithm == ArAlgorithm::tree || p.algorithm == ArAlgorithm::hierarchical) ++approximated;
  return {{"AllReduceSynchronizer",
           {{"spec", spec},
            {"compressor", p.compressor == Compressor::fp16 ? "HorovodCompressor" : "NoneCompressor"},
            {"group", p.group}}}};
}

}  // namespace

json strategy_to_autodist(const Strategy& s, const std::vector<Variable>& vars, const costmodel::ClusterSpec& c,
                          const std::vector<std::string>& hosts, const AutodistNote& note) {
  AUTODDL_CHECK(static_cast<int>(hosts.size()) == c.nodes) << hosts.size() << " hosts for " << c.nodes << " nodes";
  std::map<std::string, const Variable*> by_name;
  for (const Variable& v : vars) by_name[v.name] = &v;
  int approximated = 0;
  json nodes = json::array();
  for (const VarConfig& vc : s.vars) {
    json node = {{"var_name", vc.var + ":0"}};
    if (vc.shards <= 1) {
      node.update(synchronizer_to_autodist(vc.parts.at(0), hosts, approximated));
    } else {
      const Variable* v = by_name.at(vc.var);
      std::string partitioner;
      for (size_t d = 0; d < v->shape.size(); ++d) {
        partitioner += (d ? "," : "") + std::to_string(static_cast<int>(d) == vc.axis ? vc.shards : 1);
      }
      node["partitioner"] = partitioner;
      json parts = json::array();
      for (int i = 0; i < vc.shards; ++i) {
        json part = {{"var_name", vc.var + "/part_" + std::to_string(i) + ":0"}};
        part.update(synchronizer_to_autodist(vc.parts.at(static_cast<size_t>(i)), hosts, approximated));
        parts.push_back(std::move(part));
      }
      node["part_config"] = std::move(parts);
    }
    nodes.push_back(std::move(node));
  }
  json replicas = json::array();
  for (int n = 0; n < c.nodes; ++n) {
    for (int g = 0; g < c.gpus_per_node; ++g) replicas.push_back(hosts[static_cast<size_t>(n)] + ":GPU:" + std::to_string(g));
  }
  if (approximated > 0 && note) {
    note("AutoDist has no tree or hierarchical all-reduce spec: " + std::to_string(approximated) +
         " shard(s) written as NCCL, whose tuner picks ring or tree itself (reads back as algorithm auto)");
  }
  return {{"id", s.id.empty() ? "autoddl" : s.id},
          {"node_config", std::move(nodes)},
          {"graph_config", {{"replicas", std::move(replicas)}}}};
}

namespace {

struct Device {
  std::string host, type;
  int index = 0;
};

// AutoDist's DeviceSpec.from_string: "<address>:<TYPE>:<index>"; a bare address means its CPU 0.
bool parse_device(const std::string& s, Device& d) {
  const size_t last = s.rfind(':');
  if (last == std::string::npos) {
    d = {s, "CPU", 0};
    return !s.empty();
  }
  const size_t mid = last == 0 ? std::string::npos : s.rfind(':', last - 1);
  if (mid == std::string::npos || mid == 0) return false;
  const std::string index = s.substr(last + 1);
  if (index.empty() || index.size() > 6 || index.find_first_not_of("0123456789") != std::string::npos) return false;
  d = {s.substr(0, mid), s.substr(mid + 1, last - mid - 1), std::stoi(index)};
  return d.type == "CPU" || d.type == "GPU";
}

std::string host_list(const std::vector<std::string>& hosts) {
  std::string out;
  for (size_t i = 0; i < hosts.size() && i < 8; ++i) out += (i ? ", " : "") + hosts[i];
  if (hosts.size() > 8) out += ", ...";
  return out;
}

class Importer {
 public:
  Importer(const std::vector<std::string>& hosts, std::string source) : hosts_(hosts), source_(std::move(source)) {
    for (size_t i = 0; i < hosts.size(); ++i) index_[hosts[i]] = static_cast<int>(i);
  }
  int ef = 0;

  int host_index(const std::string& host, const std::string& where) const {
    auto it = index_.find(host);
    if (it == index_.end())
      throw InputError(source_, where, "host '" + host + "' is not a node of the cluster (hosts: " + host_list(hosts_) +
                                           "; give the resource spec that names them)");
    return it->second;
  }

  Synchronizer synchronizer(const json& node, const std::string& where) {
    Synchronizer p;
    if (node.contains("PSSynchronizer")) {
      const json& ps = node["PSSynchronizer"];
      const std::string at = where + ".PSSynchronizer";
      p.arch = Arch::ps;
      const json staleness = ps.value("staleness", json(0));
      if (!staleness.is_number_integer() || staleness.get<long long>() < 0 || staleness.get<long long>() > 1000000)
        throw InputError(source_, at + ".staleness", "must be an integer from 0 to 1000000, not " + staleness.dump());
      p.staleness = static_cast<int>(staleness.get<long long>());
      Device d;
      const std::string dest = ps.value("reduction_destination", "");
      if (!parse_device(dest, d))
        throw InputError(source_, at + ".reduction_destination",
                         "'" + dest + "' is not an AutoDist device (\"<address>:CPU:<index>\")");
      p.server = host_index(d.host, at + ".reduction_destination");
      p.local_replication = ps.value("local_replication", false);
      p.sync = ps.value("sync", false);  // proto3: absent is false
      if (p.staleness > 0 && !p.sync)
        throw InputError(source_, at + ".staleness",
                         "staleness " + std::to_string(p.staleness) + " needs sync: true (AutoDist's PS builders assert it)");
      return p;
    }
    if (node.contains("AllReduceSynchronizer")) {
      const json& ar = node["AllReduceSynchronizer"];
      const std::string at = where + ".AllReduceSynchronizer";
      p.arch = Arch::all_reduce;
      p.group = ar.value("group", 0);
      if (p.group < 0) throw InputError(source_, at + ".group", "must be >= 0");
      p.algorithm = ar.value("spec", std::string("AUTO")) == "RING" ? ArAlgorithm::ring : ArAlgorithm::automatic;
      const std::string comp = ar.value("compressor", std::string("NoneCompressor"));
      if (comp == "PowerSGDCompressor")
        throw InputError(source_, at + ".compressor",
                         "PowerSGDCompressor: autoddl prices no low-rank compression (none and fp16 only)");
      if (comp == "HorovodCompressorEF") ++ef;
      p.compressor = comp == "NoneCompressor" ? Compressor::none : Compressor::fp16;
      return p;
    }
    throw InputError(source_, where, "has no synchronizer (PSSynchronizer or AllReduceSynchronizer)");
  }

 private:
  const std::vector<std::string>& hosts_;
  std::map<std::string, int> index_;
  std::string source_;
};

// "<name>:0" -> "<name>" (a TF tensor name's output index), unless the model has the full name.
const Variable* find_var(const std::map<std::string, const Variable*>& by_name, const std::string& var_name) {
  auto it = by_name.find(var_name);
  if (it != by_name.end()) return it->second;
  const size_t colon = var_name.rfind(':');
  if (colon == std::string::npos || colon + 1 == var_name.size() ||
      var_name.find_first_not_of("0123456789", colon + 1) != std::string::npos)
    return nullptr;
  it = by_name.find(var_name.substr(0, colon));
  return it == by_name.end() ? nullptr : it->second;
}

}  // namespace

Strategy strategy_from_autodist(const json& tree, const std::vector<Variable>& vars, const costmodel::ClusterSpec& c,
                                const std::vector<std::string>& hosts, const std::string& source,
                                const AutodistNote& note) {
  AUTODDL_CHECK(static_cast<int>(hosts.size()) == c.nodes) << hosts.size() << " hosts for " << c.nodes << " nodes";
  std::map<std::string, const Variable*> by_name;
  for (const Variable& v : vars) by_name[v.name] = &v;
  Importer im(hosts, source);
  Strategy s;
  s.id = tree.value("id", "");
  const json nodes = tree.value("node_config", json::array());
  for (size_t k = 0; k < nodes.size(); ++k) {
    const json& node = nodes[k];
    const std::string where = "node_config[" + std::to_string(k) + "]";
    const std::string var_name = node.value("var_name", "");
    const Variable* v = find_var(by_name, var_name);
    if (v == nullptr)
      throw InputError(source, where + ".var_name",
                       "'" + var_name + "' is no variable of the model (names are the model's parameters, "
                       "e.g. '" + (vars.empty() ? std::string("fc1.weight") : vars[0].name) + ":0')");
    VarConfig vc;
    vc.var = v->name;
    const std::string partitioner = node.value("partitioner", "");
    const json parts = node.value("part_config", json::array());
    if (partitioner.empty()) {
      if (!parts.empty()) throw InputError(source, where + ".part_config", "given without a partitioner");
      vc.parts.push_back(im.synchronizer(node, where));
    } else {
      // AutoDist's PartitionerConfig: one split count per dimension, at most one of them > 1.
      std::vector<int> splits;
      size_t at = 0;
      while (at <= partitioner.size()) {
        size_t comma = partitioner.find(',', at);
        if (comma == std::string::npos) comma = partitioner.size();
        std::string item = partitioner.substr(at, comma - at);
        item.erase(0, item.find_first_not_of(' '));
        item.erase(item.find_last_not_of(' ') + 1);
        if (item.empty() || item.size() > 9 || item.find_first_not_of("0123456789") != std::string::npos ||
            std::stoi(item) < 1)
          throw InputError(source, where + ".partitioner", "'" + partitioner + "': each entry must be an integer >= 1");
        splits.push_back(std::stoi(item));
        at = comma + 1;
      }
      if (splits.size() != v->shape.size())
        throw InputError(source, where + ".partitioner",
                         "'" + partitioner + "' has " + std::to_string(splits.size()) + " entries; " + v->name +
                             " has " + std::to_string(v->shape.size()) + " dimensions");
      for (size_t d = 0; d < splits.size(); ++d) {
        if (splits[d] <= 1) continue;
        if (vc.shards > 1)
          throw InputError(source, where + ".partitioner", "'" + partitioner + "' splits more than one axis");
        vc.axis = static_cast<int>(d);
        vc.shards = splits[d];
      }
      if (vc.shards > 1) vc.uneven = v->shape[static_cast<size_t>(vc.axis)] % vc.shards != 0;
      if (static_cast<int>(parts.size()) != vc.shards)
        throw InputError(source, where + ".part_config",
                         std::to_string(parts.size()) + " parts for " + std::to_string(vc.shards) + " shard(s)");
      for (size_t i = 0; i < parts.size(); ++i)
        vc.parts.push_back(im.synchronizer(parts[i], where + ".part_config[" + std::to_string(i) + "]"));
    }
    s.vars.push_back(std::move(vc));
  }
  // The replicas are the GPUs the runtime was measured on: they must be the cluster's.
  const json replicas = tree.contains("graph_config") ? tree["graph_config"].value("replicas", json::array()) : json::array();
  if (!replicas.empty()) {
    std::vector<int> per_node(static_cast<size_t>(c.nodes), 0);
    std::map<std::string, size_t> seen;
    for (size_t i = 0; i < replicas.size(); ++i) {
      const std::string where = "graph_config.replicas[" + std::to_string(i) + "]";
      Device d;
      const std::string r = replicas[i].get<std::string>();
      if (!parse_device(r, d) || r.find(':') == std::string::npos)
        throw InputError(source, where, "'" + r + "' is not an AutoDist device (\"<address>:GPU:<index>\")");
      if (d.type != "GPU") throw InputError(source, where, "'" + r + "': autoddl models GPU replicas only");
      const auto [first, added] = seen.emplace(r, i);
      if (!added) throw InputError(source, where, "'" + r + "' is also replicas[" + std::to_string(first->second) + "]");
      ++per_node[static_cast<size_t>(im.host_index(d.host, where))];
    }
    for (int n = 0; n < c.nodes; ++n) {
      if (per_node[static_cast<size_t>(n)] != c.gpus_per_node)
        throw InputError(source, "graph_config.replicas",
                         std::to_string(per_node[static_cast<size_t>(n)]) + " replica(s) on " + hosts[static_cast<size_t>(n)] +
                             "; cluster " + c.name + " has " + std::to_string(c.gpus_per_node) + " GPU(s) per node");
    }
  }
  if (im.ef > 0 && note)
    note(source + ": " + std::to_string(im.ef) +
         " shard(s) use HorovodCompressorEF: priced as fp16 (error feedback changes convergence, not bytes)");
  validate_strategy(s, vars, c, source);
  return s;
}

}  // namespace autoddl::sync
