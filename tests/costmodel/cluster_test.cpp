// Pins the cluster JSON contract (docs/cluster-json.md): every preset loads and cites a source for
// every number, load/save round-trips exactly, --nodes overrides, and each kind of bad input is
// reported as InputError(file, field path, reason) naming the right field.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/embedded_presets.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"

using namespace autoddl::costmodel;
using nlohmann::json;

namespace {

// Appends the path of every number that no {"value": ..., "source": "<non-empty>"} covers.
void uncited_numbers(const json& j, const std::string& path, bool cited,
                     std::vector<std::string>& out) {
  if (j.is_number()) {
    if (!cited) out.push_back(path);
  } else if (j.is_object()) {
    if (j.contains("value") && j.contains("source") && j["source"].is_string() &&
        !j["source"].get<std::string>().empty()) {
      uncited_numbers(j["value"], path, true, out);
      return;
    }
    for (const auto& [key, value] : j.items()) uncited_numbers(value, path + "." + key, cited, out);
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) {
      uncited_numbers(j[i], path + "[" + std::to_string(i) + "]", cited, out);
    }
  }
}

json preset_json(const std::string& name) {
  for (const EmbeddedPreset& p : embedded_presets()) {
    if (p.name == name) return json::parse(p.json_text);
  }
  FAIL("no preset " << name);
  return {};
}

// The error cluster_from_json raises for `j` (as if read from "my.json").
autoddl::InputError error_for(const json& j) {
  try {
    cluster_from_json(j, "my.json");
  } catch (const autoddl::InputError& e) {
    return e;
  }
  FAIL("accepted: " << j.dump());
  return autoddl::InputError("", "", "");
}

// A valid cluster with plain numbers (dgx-a100 without citations), edited by the test cases.
json plain_cluster() {
  ClusterSpec c = resolve_cluster("dgx-a100");
  c.sources.clear();
  return cluster_to_json(c);
}

struct TempFile {
  std::string path;
  explicit TempFile(const std::string& text, const std::string& stem = "cluster") {
    path = (std::filesystem::temp_directory_path() /
            (stem + "_test_" + std::to_string(::getpid()) + ".json")).string();
    std::ofstream(path) << text;
  }
  ~TempFile() { std::remove(path.c_str()); }
};

}  // namespace

TEST_CASE("every preset loads, is named after its file and has its default node count",
          "[costmodel][cluster]") {
  std::vector<std::string> expected = {"autosync-a", "autosync-b",  "dgx-a100",    "dgx-b200",
                                       "dgx-h100",   "dgx-h200",    "dgx1-v100",   "gb200-nvl72",
                                       "gb300-nvl72", "piz-daint"};
  REQUIRE(preset_names() == expected);
  struct Row {
    const char* name;
    int nodes, gpus_per_node;
  };
  for (Row r : {Row{"piz-daint", 8, 1}, Row{"dgx1-v100", 4, 8}, Row{"dgx-a100", 4, 8},
                Row{"dgx-h100", 4, 8}, Row{"dgx-h200", 4, 8}, Row{"dgx-b200", 4, 8},
                Row{"gb200-nvl72", 1, 72}, Row{"gb300-nvl72", 1, 72}, Row{"autosync-a", 11, 1},
                Row{"autosync-b", 4, 4}}) {
    CAPTURE(r.name);
    ClusterSpec c = resolve_cluster(r.name);
    CHECK(c.name == r.name);
    CHECK(c.nodes == r.nodes);
    CHECK(c.gpus_per_node == r.gpus_per_node);
    CHECK(c.calibration_file.empty());
  }
}

TEST_CASE("every number in every preset file cites a source", "[costmodel][cluster]") {
  // The walker itself must notice a bare number, or this test could not fail.
  std::vector<std::string> found;
  uncited_numbers(json::parse(R"({"a": {"value": 1, "source": "x"}, "b": [{"c": 2}]})"), "", false,
                  found);
  REQUIRE(found == std::vector<std::string>{".b[0].c"});

  for (const EmbeddedPreset& p : embedded_presets()) {
    CAPTURE(p.name);
    std::vector<std::string> uncited;
    uncited_numbers(json::parse(p.json_text), "", false, uncited);
    CHECK(uncited.empty());
    for (const std::string& field : uncited) UNSCOPED_INFO("uncited: " << field);
  }
}

TEST_CASE("a preset keeps its citations by field path", "[costmodel][cluster]") {
  ClusterSpec c = resolve_cluster("dgx-a100");
  CHECK_THAT(c.sources.at("gpu.memory_bytes"), Catch::Contains("A100"));
  CHECK_THAT(c.sources.at("gpu.matmul_efficiency"), Catch::Contains("cuBLASLt"));
  CHECK_THAT(c.sources.at("inter.nic_bw_bytes_per_s"), Catch::Contains("200 Gb/s"));
  CHECK(c.gpu.peak_flops(DType::bf16) == 312e12);
  CHECK(c.gpu.peak_flops(DType::fp32) == 19.5e12);
  CHECK(c.gpu.peak_flops(DType::int64) == 19.5e12);
  CHECK(c.node_nic_bw_bytes_per_s() == Approx(8 * 25e9 * 0.9));
}

TEST_CASE("every preset round-trips: saved JSON equals the file and reloads to an equal spec",
          "[costmodel][cluster]") {
  for (const std::string& name : preset_names()) {
    CAPTURE(name);
    ClusterSpec c = resolve_cluster(name);
    json saved = cluster_to_json(c);
    CHECK(saved == preset_json(name));
    CHECK(cluster_from_json(saved, "saved") == c);
  }
}

TEST_CASE("clusters --json writes cluster files: each preset it lists loads back as a cluster file, equal",
          "[costmodel][cluster]") {
  // What the tool writes, it reads: the CLI's listing, not only cluster_to_json, must load.
  const TempFile listing("", "clusters_listing");
  const std::string cmd = std::string(AUTODDL_BINARY) + " clusters --json " + listing.path + " > /dev/null 2>&1";
  REQUIRE(std::system(cmd.c_str()) == 0);
  const json rows = autoddl::read_json_file(listing.path);
  REQUIRE(rows.is_array());
  REQUIRE(rows.size() == preset_names().size());
  for (const json& row : rows) {
    const std::string name = row.at("name").get<std::string>();
    CAPTURE(name);
    const TempFile file(row.dump(2), "clusters_row");
    CHECK(resolve_cluster(file.path) == resolve_cluster(name));
  }
}

TEST_CASE("plain numbers and per-point citations round-trip as written", "[costmodel][cluster]") {
  json j = plain_cluster();
  j["calibration_file"] = "calib/dgx-a100.json";
  j["gpu"]["matmul_efficiency"][1]["efficiency"] = {{"value", 0.5}, {"source", "measured"}};
  ClusterSpec c = cluster_from_json(j, "my.json");
  CHECK(c.sources.size() == 1);
  CHECK(c.sources.at("gpu.matmul_efficiency[1].efficiency") == "measured");
  CHECK(c.gpu.matmul_efficiency[1].efficiency == 0.5);
  CHECK(c.calibration_file == "calib/dgx-a100.json");
  CHECK(cluster_to_json(c) == j);
}

TEST_CASE("a node-count override (--nodes) replaces the node count and records where it came from", "[costmodel][cluster]") {
  ClusterSpec base = resolve_cluster("dgx-a100");
  ClusterSpec c = resolve_cluster("dgx-a100", 16);
  CHECK(c.nodes == 16);
  CHECK(c.total_gpus() == 128);
  CHECK(c.sources.at("nodes") == "--nodes 16");
  c.nodes = base.nodes;
  c.sources["nodes"] = base.sources.at("nodes");
  CHECK(c == base);  // nothing else changed
  for (int bad : {0, -3}) {
    try {
      resolve_cluster("dgx-a100", bad);
      FAIL("accepted --nodes " << bad);
    } catch (const autoddl::InputError& e) {
      CHECK(e.file() == "--nodes");
      CHECK(e.field().empty());
      CHECK(e.reason() == "must be >= 1 (got " + std::to_string(bad) + ")");
    }
  }
}

TEST_CASE("an unknown cluster name lists the presets and mentions JSON paths", "[costmodel][cluster]") {
  try {
    resolve_cluster("dgx-b300");
    FAIL("accepted an unknown preset");
  } catch (const autoddl::InputError& e) {
    CHECK(std::string(e.what()) ==
          "--cluster: unknown cluster 'dgx-b300' (presets: autosync-a, autosync-b, dgx-a100, "
          "dgx-b200, dgx-h100, dgx-h200, dgx1-v100, gb200-nvl72, gb300-nvl72, piz-daint; "
          "or a path to a cluster JSON)");
  }
}

TEST_CASE("a cluster path ending in .json is loaded from disk, and its errors name the file",
          "[costmodel][cluster]") {
  json j = plain_cluster();
  j["name"] = "mine";
  TempFile good(j.dump());
  ClusterSpec c = resolve_cluster(good.path, 2);
  CHECK(c.name == "mine");
  CHECK(c.nodes == 2);

  j["inter"]["nic_bw_bytes_per_s"] = -1;
  TempFile bad(j.dump(), "bad_cluster");
  try {
    load_cluster_file(bad.path);
    FAIL("accepted a negative NIC bandwidth");
  } catch (const autoddl::InputError& e) {
    CHECK(std::string(e.what()) == bad.path + ": inter.nic_bw_bytes_per_s: must be > 0 (got -1)");
  }

  TempFile broken("{\"name\": \"x\",\n  \"nodes\": }", "broken_cluster");
  try {
    load_cluster_file(broken.path);
    FAIL("accepted malformed JSON");
  } catch (const autoddl::InputError& e) {
    CHECK(e.file() == broken.path);
    CHECK(e.field() == "line 2:12");
  }

  try {
    resolve_cluster("/nonexistent/cluster.json");
    FAIL("accepted a missing file");
  } catch (const autoddl::InputError& e) {
    CHECK(e.file() == "/nonexistent/cluster.json");
    CHECK_THAT(e.reason(), Catch::StartsWith("cannot open"));
  }
}

TEST_CASE("each kind of bad cluster input names its field and why", "[costmodel][cluster]") {
  struct Case {
    const char* what;
    const char* pointer;  // JSON pointer to edit
    json value;           // new value; null = remove the key
    const char* field;
    const char* reason;   // exact, or a prefix when it ends in "..."
  };
  const json sourced_no_source = {{"value", 4}};
  const json sourced_extra = {{"value", 4}, {"source", "x"}, {"note", "y"}};
  const json sourced_empty = {{"value", 4}, {"source", ""}};
  const json sourced_string = {{"value", "four"}, {"source", "x"}};
  const json unsorted = json::parse(
      R"([{"flops": 1e8, "efficiency": 0.1}, {"flops": 1e10, "efficiency": 0.5},
          {"flops": 1e9, "efficiency": 0.6}])");
  const json bad_point = json::parse(R"([{"flops": 1e8, "efficiency": 1.2}])");
  const json point_extra = json::parse(R"([{"flops": 1e8, "efficiency": 0.5, "shape": 3}])");
  const std::vector<Case> cases = {
      {"unknown top-level key", "/colour", "red", "colour", "unknown key (allowed: ..."},
      {"unknown nested key", "/gpu/tflops", 1, "gpu.tflops", "unknown key (allowed: ..."},
      {"missing nested key", "/inter/latency_s", nullptr, "inter.latency_s", "missing"},
      {"missing section", "/gpu", nullptr, "gpu", "missing"},
      {"section of the wrong type", "/intra", json::array(), "intra", "must be an object (got array)"},
      {"string where a number goes", "/nodes", "four", "nodes", "must be a number (got string)"},
      {"boolean where a number goes", "/gpu/memory_bytes", true, "gpu.memory_bytes",
       "must be a number (got boolean)"},
      {"number where a string goes", "/gpu/name", 100, "gpu.name", "must be a string (got number)"},
      {"fractional node count", "/nodes", 2.5, "nodes", "must be an integer (got 2.5)"},
      {"zero nodes", "/nodes", 0, "nodes", "must be >= 1 (got 0)"},
      {"zero GPUs per node", "/gpus_per_node", 0, "gpus_per_node", "must be >= 1 (got 0)"},
      {"negative NIC bandwidth", "/inter/nic_bw_bytes_per_s", -1, "inter.nic_bw_bytes_per_s",
       "must be > 0 (got -1)"},
      {"zero NVSwitch bandwidth", "/intra/bw_bytes_per_s", 0, "intra.bw_bytes_per_s",
       "must be > 0 (got 0)"},
      {"negative peak FLOP/s", "/gpu/peak_flops_bf16", -312e12, "gpu.peak_flops_bf16",
       "must be > 0 (got -3.12e+14)"},
      {"negative latency", "/intra/latency_s", -1e-6, "intra.latency_s", "must be >= 0 (got -1e-06)"},
      {"zero NICs", "/inter/nics_per_node", 0, "inter.nics_per_node", "must be >= 1 (got 0)"},
      {"efficiency above 1", "/intra/efficiency", 1.5, "intra.efficiency",
       "must be in (0, 1] (got 1.5)"},
      {"efficiency of 0", "/inter/efficiency", 0, "inter.efficiency", "must be in (0, 1] (got 0)"},
      {"HBM efficiency above 1", "/gpu/hbm_efficiency", 2, "gpu.hbm_efficiency",
       "must be in (0, 1] (got 2)"},
      {"oversubscription below 1", "/inter/oversubscription", 0.5, "inter.oversubscription",
       "must be >= 1 (got 0.5)"},
      {"unknown topology", "/inter/topology", "torus", "inter.topology",
       "must be one of star, fat-tree (got \"torus\")"},
      {"unknown fabric", "/intra/fabric", "infinity-fabric", "intra.fabric",
       "must be one of nvswitch, nvlink, pcie, none (got \"infinity-fabric\")"},
      {"fabric none with 8 GPUs per node", "/intra/fabric", "none", "intra.fabric",
       "must not be \"none\" with gpus_per_node 8 (> 1 GPU per node needs a fabric)"},
      {"unsorted efficiency table", "/gpu/matmul_efficiency", unsorted,
       "gpu.matmul_efficiency[2].flops",
       "points must be sorted by strictly increasing flops (got 1e+09 after 1e+10)"},
      {"efficiency point above 1", "/gpu/conv_efficiency", bad_point,
       "gpu.conv_efficiency[0].efficiency", "must be in (0, 1] (got 1.2)"},
      {"unknown key in a point", "/gpu/conv_efficiency", point_extra, "gpu.conv_efficiency[0].shape",
       "unknown key (allowed: flops, efficiency)"},
      {"empty efficiency table", "/gpu/matmul_efficiency", json::array(), "gpu.matmul_efficiency",
       "must be a non-empty array of {flops, efficiency} (got an empty array)"},
      {"cited number without a source", "/nodes", sourced_no_source, "nodes.source", "missing"},
      {"cited number with an extra key", "/nodes", sourced_extra, "nodes.note",
       "unknown key (allowed: value, source)"},
      {"cited number with an empty source", "/nodes", sourced_empty, "nodes.source",
       "must be a non-empty string"},
      {"cited value of the wrong type", "/nodes", sourced_string, "nodes",
       "must be a number (got string)"},
      {"calibration file that is not a string", "/calibration_file", 3, "calibration_file",
       "must be a string (got number)"},
      {"a measured kernel rate of zero", "/gpu/norm_fwd_rate", 0, "gpu.norm_fwd_rate", "must be >= 0.001 (got 0)"},
      {"a measured kernel rate above twice streaming", "/gpu/optimizer_rate", 3, "gpu.optimizer_rate",
       "must be <= 2 (got 3)"},
      {"attention reference tiles without tail waves", "/gpu/attention_reference_tiles", 2048,
       "gpu.attention_tail_waves", "attention_reference_tiles and attention_tail_waves go together"},
  };
  for (const Case& k : cases) {
    CAPTURE(k.what);
    json j = plain_cluster();
    json::json_pointer ptr(k.pointer);
    if (k.value.is_null()) {
      j.at(ptr.parent_pointer()).erase(ptr.back());
    } else {
      j[ptr] = k.value;
    }
    autoddl::InputError e = error_for(j);
    CHECK(e.file() == "my.json");
    CHECK(e.field() == k.field);
    std::string reason = k.reason;
    if (reason.size() > 3 && reason.substr(reason.size() - 3) == "...") {
      CHECK_THAT(e.reason(), Catch::StartsWith(reason.substr(0, reason.size() - 3)));
    } else {
      CHECK(e.reason() == reason);
    }
  }
  autoddl::InputError e = error_for(json::array());
  CHECK(e.field().empty());
  CHECK(e.reason() == "must be an object (got array)");
}

TEST_CASE("attention occupancy needs the SM count and a tail in range", "[costmodel][cluster]") {
  json j = plain_cluster();
  j["gpu"]["attention_reference_tiles"] = 2048;
  j["gpu"]["attention_tail_waves"] = 0.9;
  j["gpu"].erase("sm_count");
  autoddl::InputError e = error_for(j);
  CHECK(e.field() == "gpu.sm_count");
  CHECK(e.reason() == "attention_reference_tiles needs sm_count (tiles per SM)");
  j["gpu"]["sm_count"] = 132;
  j["gpu"]["attention_tail_waves"] = -1;
  e = error_for(j);
  CHECK(e.field() == "gpu.attention_tail_waves");
  CHECK(e.reason() == "must be >= 0 (got -1)");
  j["gpu"]["attention_tail_waves"] = 0.9;
  CHECK(cluster_from_json(j, "my.json").gpu.attention_reference_tiles == 2048);
}

TEST_CASE("a cluster with one GPU per node may have no intra fabric and zero intra bandwidth",
          "[costmodel][cluster]") {
  ClusterSpec c = resolve_cluster("piz-daint");
  CHECK(c.intra.fabric == "none");
  CHECK(c.intra.bw_bytes_per_s == 0);
  json j = cluster_to_json(c);
  j["intra"]["bw_bytes_per_s"] = -1;
  CHECK(error_for(j).reason() == "must be >= 0 (got -1)");
}

TEST_CASE("efficiency interpolates linearly in log10(flops) and clamps at the table's ends",
          "[costmodel][cluster]") {
  std::vector<EfficiencyPoint> table = {{1e9, 0.2}, {1e11, 0.6}, {1e12, 0.8}};
  CHECK(interpolate_efficiency(table, 1e9) == Approx(0.2));
  CHECK(interpolate_efficiency(table, 1e10) == Approx(0.4));  // halfway in log space
  CHECK(interpolate_efficiency(table, 1e11) == Approx(0.6));
  CHECK(interpolate_efficiency(table, std::sqrt(1e11 * 1e12)) == Approx(0.7));
  CHECK(interpolate_efficiency(table, 1e3) == Approx(0.2));
  CHECK(interpolate_efficiency(table, 0) == Approx(0.2));
  CHECK(interpolate_efficiency(table, 1e15) == Approx(0.8));
  CHECK(interpolate_efficiency({}, 1e12) == 1.0);
  CHECK(interpolate_efficiency({{5e9, 0.5}}, 1e12) == 0.5);
}

TEST_CASE("a memory reserve is optional and must lie below the GPU's memory", "[costmodel][cluster]") {
  json j = plain_cluster();
  j["gpu"]["memory_reserve_bytes"] = -1;
  autoddl::InputError e = error_for(j);
  CHECK(e.field() == "gpu.memory_reserve_bytes");
  j["gpu"]["memory_reserve_bytes"] = j["gpu"]["memory_bytes"];
  e = error_for(j);
  CHECK(e.field() == "gpu.memory_reserve_bytes");
  CHECK(e.reason() == "must be less than gpu.memory_bytes");
  j["gpu"]["memory_reserve_bytes"] = 1e9;
  const ClusterSpec c = cluster_from_json(j, "my.json");
  CHECK(c.gpu.memory_reserve_bytes == 1e9);
  CHECK(usable_memory_bytes(c.gpu) == c.gpu.memory_bytes - 1e9);
  CHECK(cluster_to_json(c)["gpu"]["memory_reserve_bytes"] == 1e9);  // written back
  j["gpu"].erase("memory_reserve_bytes");
  CHECK(cluster_from_json(j, "my.json").gpu.memory_reserve_bytes == 0);
}
