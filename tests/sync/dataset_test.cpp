// The dataset writer: records for every (pair, index), the same for any --jobs, resumable
// after an interruption (a torn last line included).
#ifdef AUTODDL_SYNC_HAVE_SIM
#include "autoddl/sync/dataset.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/sync/builders.hpp"
#include "autoddl/sync/features.hpp"
#include "autoddl/sync/training.hpp"

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
DatasetOptions options(int per_pair, int jobs) {
  DatasetOptions o;
  o.per_pair = per_pair;
  o.jobs = jobs;
  return o;
}
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
  CHECK(builders.size() == autoddl::sync::builders().size() + 1);  // every builder and "sampled"
  CHECK(fs::exists(dir / "one" / "schema.json"));

  SECTION("a rerun adds nothing; an interrupted file is completed") {
    CHECK(write_dataset((dir / "one").string(), kPairs, options(12, 1)) == 0);
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
    std::vector<std::string> notes;
    DatasetOptions resume = options(12, 2);
    resume.note = [&](const std::string& n) { notes.push_back(n); };
    CHECK(write_dataset((dir / "two").string(), kPairs, resume) == 14);
    CHECK(sorted_lines(path) == one);
    CHECK(notes == std::vector<std::string>{path + ": line 11: torn by an interrupted write (a kill) and left out; "
                                                   "its record is made again"});
  }
  fs::remove_all(dir);
}

namespace {
// A dataset folder whose records.jsonl holds `lines` (hand-made records: a resume reads only
// their key, pair and index, and every case below is refused before anything is simulated).
fs::path folder_with(const std::string& name, const std::vector<std::string>& lines) {
  fs::path dir = fs::temp_directory_path() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream out(dir / "records.jsonl");
  for (const std::string& l : lines) out << l << "\n";
  return dir;
}

std::string record_line(const std::string& key, int index) {
  return nlohmann::json{{"key", key}, {"pair", "ncf@autosync-a"}, {"index", index}}.dump();
}

std::string text_of(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The error message of resuming the dataset in `dir` (ncf@autosync-a, 3 records); the file
// must be left as it was.
std::string resume_error(const fs::path& dir) {
  const std::string before = text_of(dir / "records.jsonl");
  std::string error;
  try {
    write_dataset(dir.string(), {{"ncf", {}, "autosync-a"}}, options(3, 1));
  } catch (const autoddl::InputError& e) {
    error = e.what();
  }
  CHECK(text_of(dir / "records.jsonl") == before);
  CHECK_FALSE(fs::exists(dir / "schema.json"));
  return error;
}
}  // namespace

TEST_CASE("a resume refuses a record whose key disagrees with its index, a bad line and a key seen twice",
          "[sync][dataset]") {
  // Record 1 says index 2: trusting its key would leave index 1 missing and write index 2 twice.
  fs::path dir = folder_with("autoddl_dataset_key", {record_line("ncf@autosync-a#0", 0), record_line("ncf@autosync-a#1", 2)});
  const std::string path = (dir / "records.jsonl").string();
  CHECK(resume_error(dir) == path + ": line 2: key: 'ncf@autosync-a#1' disagrees with the record's pair and index "
                                    "('ncf@autosync-a#2'): the line was changed after it was written; delete it "
                                    "and `autoddl sync dataset` makes the record again");
  dir = folder_with("autoddl_dataset_key", {record_line("ncf@autosync-a#0", 0), "{\"key\":", record_line("ncf@autosync-a#1", 1)});
  CHECK(resume_error(dir) == path + ": line 2: malformed JSON; a kill tears only the last line, so this one was "
                                    "changed otherwise: delete it and `autoddl sync dataset` makes its record again");
  dir = folder_with("autoddl_dataset_key", {record_line("ncf@autosync-a#0", 0), record_line("ncf@autosync-a#0", 0)});
  CHECK(resume_error(dir) == path + ": line 2: key: 'ncf@autosync-a#0' is also at line 1 (delete one of them)");
  fs::remove_all(dir);
}

TEST_CASE("records.jsonl must be a regular file to every reader, and a refused one is left as it was",
          "[sync][dataset]") {
  fs::path dir = fs::temp_directory_path() / "autoddl_dataset_zero";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::create_symlink("/dev/zero", dir / "records.jsonl");
  CHECK_THROWS_WITH(write_dataset(dir.string(), kPairs, options(3, 1)), (dir / "records.jsonl").string() + ": not a regular file");
  CHECK_THROWS_WITH(read_records({dir.string()}), (dir / "records.jsonl").string() + ": not a regular file");
  CHECK_THROWS_WITH(refeature_dataset(dir.string()), (dir / "records.jsonl").string() + ": not a regular file");
  CHECK(fs::is_symlink(dir / "records.jsonl"));
  CHECK_FALSE(fs::exists(dir / "schema.json"));
  fs::remove_all(dir);
}

TEST_CASE("records per pair are at most 100000, refused before anything is built", "[sync][dataset]") {
  const std::string dir = (fs::temp_directory_path() / "autoddl_dataset_cap").string();
  DatasetOptions o;
  o.per_pair = 1000000000;
  CHECK_THROWS_WITH(write_dataset(dir, kPairs, o), "--per-pair: must be an integer from 1 to 100000");
  CHECK_FALSE(fs::exists(dir));
}
TEST_CASE("dataset records are made at AutoSync's per-replica batch and say so, under the same pair key",
          "[sync][dataset][workload]") {
  fs::path dir = fs::temp_directory_path() / "autoddl_sync_dataset_workload_test";
  fs::remove_all(dir);
  CHECK(write_dataset(dir.string(), {{"ncf", {}, "autosync-a"}, {"ncf", {{"batch", "64"}}, "autosync-a"}}, options(1, 1)) == 2);
  std::map<std::string, nlohmann::json> by_pair;
  for (const std::string& l : sorted_lines((dir / "records.jsonl").string())) {
    nlohmann::json j = nlohmann::json::parse(l);
    by_pair[j["pair"].get<std::string>()] = j;
  }
  REQUIRE(by_pair.count("ncf@autosync-a"));
  REQUIRE(by_pair.count("ncf[batch=64]@autosync-a"));
  CHECK(by_pair["ncf@autosync-a"]["knobs"]["batch"] == "2816");  // 256 per replica x 11 GPUs
  CHECK(by_pair["ncf[batch=64]@autosync-a"]["knobs"]["batch"] == "64");
  // The larger batch computes longer between the same gradient exchanges.
  CHECK(by_pair["ncf@autosync-a"]["analytical_iteration_s"].get<double>() >
        by_pair["ncf[batch=64]@autosync-a"]["analytical_iteration_s"].get<double>());
  fs::remove_all(dir);
}
#endif
