// Determinism (issue 17): for a fixed --seed, search, simulate, sync search and a sweep write
// byte-identical JSON twice over, apart from the wall-clock measurements named in
// kWallClockFields (README "Determinism" lists the same names).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "autoddl/costmodel/io.hpp"

namespace {

const char* const kWallClockFields[] = {"search_s", "seconds", "wall_s", "lowering_wall_s", "finished_utc"};

void strip(nlohmann::json& j) {
  if (j.is_object()) {
    for (const char* k : kWallClockFields) j.erase(k);
    for (auto& [k, v] : j.items()) strip(v);
  } else if (j.is_array()) {
    for (auto& v : j) strip(v);
  }
}

std::string run_json(const std::string& args, const std::string& out) {
  const std::string cmd = std::string(AUTODDL_BINARY) + " " + args + " > /dev/null 2>&1";
  REQUIRE(std::system(cmd.c_str()) == 0);
  nlohmann::json j = autoddl::read_json_file(out);
  strip(j);
  return j.dump();
}

std::string tmp_dir(const std::string& name) {
  const std::string dir = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/autoddl_" + name;
  REQUIRE(std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str()) == 0);
  return dir;
}

}  // namespace

TEST_CASE("a fixed seed gives byte-identical JSON from search, simulate and sync search", "[experiments][determinism]") {
  const std::string d = tmp_dir("determinism");
  const std::string m = "--model gpt --set layers=2,hidden=256,heads=8,seq=128,vocab=1024 --cluster dgx-a100 --nodes 1";
  for (const auto& [name, args] : {std::pair<std::string, std::string>{"search", "search " + m + " --seed 3 --json "},
                                   {"simulate", "simulate " + m + " --scheme dp --json "},
                                   {"sync", "sync search --model ncf --cluster autosync-a --trials 20 --seed 2 --json "}}) {
    INFO(name);
    const std::string a = run_json(args + d + "/" + name + "1.json", d + "/" + name + "1.json");
    const std::string b = run_json(args + d + "/" + name + "2.json", d + "/" + name + "2.json");
    CHECK(a == b);
  }
}

TEST_CASE("a sweep run twice records the same rows apart from wall-clock fields", "[experiments][determinism]") {
  const std::string d = tmp_dir("determinism_sweep");
  std::ofstream(d + "/c.json") << R"({"name": "det", "models": [{"name": "mlp"}],
    "clusters": [{"name": "dgx-a100", "gpus": [4, 8]}], "tasks": [{"search": ["cd-nbh,dp"]}, {"schemes": ["dp"]}]})";
  std::string rows[2];
  for (int i = 0; i < 2; ++i) {
    const std::string out = d + "/out" + std::to_string(i);
    REQUIRE(std::system((std::string(AUTODDL_BINARY) + " sweep run " + d + "/c.json --jobs 2 --out " + out +
                         " > /dev/null 2>&1").c_str()) == 0);
    std::ifstream in(out + "/results.jsonl");
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) {
      nlohmann::json j = nlohmann::json::parse(line);
      strip(j);
      lines.push_back(j.dump());
    }
    std::sort(lines.begin(), lines.end());  // workers finish in any order
    REQUIRE(lines.size() == 4);
    for (const std::string& l : lines) rows[i] += l + "\n";
  }
  CHECK(rows[0] == rows[1]);
}
