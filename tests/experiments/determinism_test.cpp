// Determinism (issue 17): for a fixed --seed, search, simulate, sync search and a sweep write
// byte-identical JSON twice over, apart from the wall-clock measurements named in
// kWallClockFields (docs/testing.md, "Determinism", lists the same names).
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "autoddl/costmodel/io.hpp"
#include "sweep_fixture.hpp"

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

std::string run_json(const std::vector<std::string>& args, const std::string& out) {
  REQUIRE(sweep_test::run_autoddl(args, out + ".log") == 0);
  nlohmann::json j = autoddl::read_json_file(out);
  strip(j);
  return j.dump();
}

}  // namespace

TEST_CASE("a fixed seed gives byte-identical JSON from search, simulate and sync search", "[experiments][determinism]") {
  const std::string d = sweep_test::scratch("determinism");
  const std::vector<std::string> m = {"--model", "gpt", "--set", "layers=2,hidden=256,heads=8,seq=128,vocab=1024",
                                      "--cluster", "dgx-a100", "--nodes", "1"};
  auto with = [](std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  const std::pair<std::string, std::vector<std::string>> runs[] = {
      {"search", with(with({"search"}, m), {"--seed", "3"})},
      {"simulate", with(with({"simulate"}, m), {"--scheme", "dp"})},
      {"sync", {"sync", "search", "--model", "ncf", "--cluster", "autosync-a", "--trials", "20", "--seed", "2"}}};
  for (const auto& [name, args] : runs) {
    INFO(name);
    const std::string a = d + "/" + name + "1.json", b = d + "/" + name + "2.json";
    CHECK(run_json(with(args, {"--json", a}), a) == run_json(with(args, {"--json", b}), b));
  }
}

TEST_CASE("a sweep run twice records the same rows apart from wall-clock fields", "[experiments][determinism]") {
  const std::string d = sweep_test::scratch("determinism_sweep");
  const std::string config = sweep_test::write_config(d, nlohmann::json::parse(R"({"name": "det", "models": [{"name": "mlp"}],
    "clusters": [{"name": "dgx-a100", "gpus": [4, 8]}], "tasks": [{"search": ["cd-nbh,dp"]}, {"schemes": ["dp"]}]})"));
  std::string rows[2];
  for (int i = 0; i < 2; ++i) {
    const std::string out = d + "/out" + std::to_string(i);
    REQUIRE(sweep_test::run_autoddl({"sweep", "run", config, "--jobs", "2", "--out", out}, out + ".log") == 0);
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
