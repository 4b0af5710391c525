// `autoddl sync dataset import --autodist DIR` (autodist_records.hpp): every run of an AutoSync-
// layout directory read, checked and turned into a dataset record before anything is written,
// then records.jsonl and schema.json written together (all or none).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/costmodel/output_files.hpp"
#include "autoddl/sync/analytical.hpp"
#include "autoddl/sync/autodist.hpp"
#include "autoddl/sync/autodist_proto.hpp"
#include "autoddl/sync/autodist_records.hpp"
#include "autoddl/sync/features.hpp"
#include "autoddl/sync/strategy_json.hpp"

namespace autoddl::sync {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The first of DIR/<sub>/<id>, <id>.yml, <id>.yaml that exists; "" if none.
std::string find_file(const std::string& dir, const std::string& sub, const std::string& id) {
  for (const char* ext : {"", ".yml", ".yaml"}) {
    const fs::path p = fs::path(dir) / sub / (id + ext);
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) return p.string();
  }
  return "";
}

// strategies/<ID>[.pb|.pbtxt|.txt|.json] -> ID, sorted; hidden files skipped.
std::map<std::string, std::string> strategy_files(const std::string& dir) {
  const fs::path sdir = fs::path(dir) / "strategies";
  std::error_code ec;
  if (!fs::is_directory(sdir, ec))
    throw InputError(dir, "strategies",
                     "no such directory (an AutoDist record set holds strategies/<ID>, runtime/<ID>.yml and "
                     "resource_spec/<ID>)");
  std::map<std::string, std::string> out;
  for (const fs::directory_entry& e : fs::directory_iterator(sdir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name[0] == '.' || !e.is_regular_file()) continue;
    std::string id = name;
    for (const char* ext : {".pb", ".pbtxt", ".txt", ".json", ".prototxt"}) {
      const std::string x = ext;
      if (id.size() > x.size() && id.compare(id.size() - x.size(), x.size(), x) == 0) {
        id.resize(id.size() - x.size());
        break;
      }
    }
    const auto [at, added] = out.emplace(id, e.path().string());
    if (!added) throw InputError(e.path().string(), "", "run ID '" + id + "' also names " + at->second);
  }
  if (ec) throw InputError(sdir.string(), "", "cannot list: " + ec.message());
  if (out.empty()) throw InputError(sdir.string(), "", "no strategy files");
  return out;
}

}  // namespace

int64_t import_autodist_dataset(const std::string& in_dir, const costmodel::Graph& g, const costmodel::ClusterSpec& c,
                                const AutodistImport& o, const std::string& out_dir) {
  const std::string records = (fs::path(out_dir) / "records.jsonl").string();
  std::error_code ec;
  if (fs::exists(fs::symlink_status(records, ec)))
    throw InputError(records, "", "exists already (import writes a new dataset: give another --out or remove it)");
  const std::map<std::string, std::string> runs = strategy_files(in_dir);
  const std::vector<Variable> vars = extract_variables(g);

  std::vector<std::string> fallback_hosts = default_autodist_hosts(c.nodes);
  std::string fallback_source = "node0..node" + std::to_string(c.nodes - 1);
  std::map<std::string, std::vector<std::string>> hosts_of;  // by resource spec path
  bool bandwidth_noted = false;
  const double cluster_gbps = c.inter.nics_per_node * c.inter.nic_bw_bytes_per_s * 8 / 1e9;
  auto hosts_from = [&](const std::string& path) -> const std::vector<std::string>& {
    auto it = hosts_of.find(path);
    if (it != hosts_of.end()) return it->second;
    const AutodistResourceSpec spec = load_resource_spec(path);
    for (const AutodistNode& n : spec.nodes) {
      const double gbps = n.network_bandwidth_gbps;
      if (gbps > 0 && std::abs(gbps - cluster_gbps) > 0.1 * cluster_gbps && !bandwidth_noted && o.note) {
        o.note(path + ": network_bandwidth " + std::to_string(static_cast<int64_t>(std::lround(gbps))) +
               " Gbit/s on " + n.address + "; cluster " + c.name + " models " +
               std::to_string(static_cast<int64_t>(std::lround(cluster_gbps))) +
               " Gbit/s per node: the features use the cluster's");
        bandwidth_noted = true;
      }
    }
    return hosts_of.emplace(path, resource_spec_hosts(spec, c, path)).first->second;
  };
  if (!o.resource_spec.empty()) {
    fallback_hosts = hosts_from(o.resource_spec);
    fallback_source = o.resource_spec;
  }

  std::string out;
  int64_t index = 0;
  for (const auto& [id, strategy_path] : runs) {
    const std::string runtime_path = find_file(in_dir, "runtime", id);
    if (runtime_path.empty())
      throw InputError(strategy_path, "", "no runtime file for run '" + id + "' (runtime/" + id + ".yml)");
    const std::string spec_path = find_file(in_dir, "resource_spec", id);
    const std::vector<std::string>& hosts = spec_path.empty() ? fallback_hosts : hosts_from(spec_path);
    const json tree = read_autodist_strategy(read_text_file(strategy_path), strategy_path);
    Strategy s = strategy_from_autodist(tree, vars, c, hosts, strategy_path, o.note);
    if (s.id.empty()) s.id = id;
    const AutodistRuntime rt = parse_runtime(read_text_file(runtime_path), runtime_path);
    const Evaluation e = evaluate_analytical(g, vars, s, c);
    out += dump_json({{"key", o.pair.key() + "#" + std::to_string(index)},
                      {"pair", o.pair.key()},
                      {"model", o.pair.model},
                      {"knobs", o.knobs},
                      {"cluster", o.pair.cluster},
                      {"index", index},
                      {"builder", "imported"},
                      {"autodist_id", id},
                      {"hosts", spec_path.empty() ? fallback_source : spec_path},
                      {"strategy", strategy_to_json(s)},
                      {"features", strategy_features(vars, s, e, c)},
                      {"analytical_iteration_s", e.iteration_s},
                      {"runtime_s", rt.runtime_s},
                      {"runtimes_s", rt.runtimes_s}}) +
           "\n";
    ++index;
  }
  fs::create_directories(out_dir, ec);
  if (ec) throw InputError(out_dir, "", "cannot create the directory: " + ec.message());
  json schema = dataset_schema();
  schema["record"]["builder"] = "\"imported\" for records from `sync dataset import --autodist`";
  schema["record"]["autodist_id"] = "imported records: the run's <ID> in the AutoDist record set";
  schema["record"]["hosts"] = "imported records: the resource spec that named the strategy's hosts";
  schema["record"]["runtimes_s"] = "simulated iterations, or the measured trials of an imported run";
  OutputFiles files;
  files.add(records, std::move(out));
  files.add_json((fs::path(out_dir) / "schema.json").string(), schema);
  files.commit();
  return index;
}

}  // namespace autoddl::sync
