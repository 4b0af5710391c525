// The dataset writer: records for every (pair, index), the same for any --jobs, resumable
// after an interruption (a torn last line included).
#ifdef AUTODDL_SYNC_HAVE_SIM
#include "autoddl/sync/dataset.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>

#include "autoddl/sync/features.hpp"

using namespace autoddl::sync;
namespace fs = std::filesystem;

namespace {
std::vector<std::string> sorted_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) {
    // the wall-clock time of each simulation is the one field that differs between runs
    nlohmann::json j = nlohmann::json::parse(l);
    j.erase("sim_wall_s");
    lines.push_back(j.dump());
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}
const std::vector<DatasetPair> kPairs = {{"ncf", {}, "autosync-a"}, {"vgg16", {}, "autosync-b"}};
}  // namespace

TEST_CASE("the dataset has one record per pair and index, the same for any number of jobs",
          "[sync][dataset]") {
  fs::path dir = fs::temp_directory_path() / "autoddl_sync_dataset_test";
  fs::remove_all(dir);
  DatasetOptions o;
  o.per_pair = 12;
  CHECK(write_dataset((dir / "one").string(), kPairs, o) == 24);
  o.jobs = 2;
  CHECK(write_dataset((dir / "two").string(), kPairs, o) == 24);
  std::vector<std::string> one = sorted_lines((dir / "one" / "records.jsonl").string());
  CHECK(one == sorted_lines((dir / "two" / "records.jsonl").string()));
  REQUIRE(one.size() == 24);
  std::set<std::string> builders;
  for (const std::string& l : one) {
    nlohmann::json j = nlohmann::json::parse(l);
    CHECK(j["features"].size() == feature_names().size());
    CHECK(j["runtime_s"].get<double>() > 0);
    builders.insert(j["builder"].get<std::string>());
  }
  CHECK(builders.size() == 10);  // the 9 builders and "sampled"
  CHECK(fs::exists(dir / "one" / "schema.json"));

  SECTION("a rerun adds nothing; an interrupted file is completed") {
    CHECK(write_dataset((dir / "one").string(), kPairs, {12, 1, 1}) == 0);
    std::string path = (dir / "two" / "records.jsonl").string();
    std::vector<std::string> lines;
    {
      std::ifstream in(path);
      for (std::string l; std::getline(in, l);) lines.push_back(l);
    }
    {
      std::ofstream out(path, std::ios::trunc);
      for (size_t i = 0; i < 10; ++i) out << lines[i] << "\n";
      out << lines[10].substr(0, lines[10].size() / 2);  // torn by the interruption
    }
    CHECK(write_dataset((dir / "two").string(), kPairs, {12, 1, 2}) == 14);
    CHECK(sorted_lines(path) == one);
  }
  fs::remove_all(dir);
}
#endif
