// Atomic outputs (issue 17): a result file appears whole or not at all. A search killed with
// SIGKILL or SIGTERM mid-run leaves neither the file nor a temporary; a temporary left by a dead
// process (SIGKILL inside the write) is swept by the next write of the same file.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "autoddl/costmodel/io.hpp"
#include "sweep_fixture.hpp"

namespace fs = std::filesystem;

namespace {

std::vector<std::string> entries(const fs::path& d) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(d)) out.push_back(e.path().filename().string());
  return out;
}

}  // namespace

TEST_CASE("a search killed mid-run leaves no result file and no temporary", "[experiments][atomic]") {
  for (int sig : {SIGKILL, SIGTERM}) {
    INFO("signal " << sig);
    const fs::path d = sweep_test::scratch("kill_" + std::to_string(sig));
    const fs::path log = d.string() + ".log";  // beside the folder, which must stay empty
    const pid_t p = sweep_test::spawn_autoddl(
        {"search", "--model", "gpt", "--set", "layers=96,hidden=12288,heads=96,seq=2048,vocab=51200,batch=1024",
         "--cluster", "dgx-a100", "--nodes", "16", "--json", (d / "r.json").string(), "--out", (d / "s.json").string()},
        log.string());
    ::sleep(1);
    ::kill(p, sig);
    CHECK(sweep_test::wait_exit(p) == 128 + sig);  // killed mid-search, not finished
    CHECK(entries(d).empty());
    fs::remove_all(d);
    fs::remove(log);
  }
}

TEST_CASE("the next write sweeps a temporary left by a dead process", "[experiments][atomic]") {
  const fs::path d = sweep_test::scratch("sweep_tmp");
  const pid_t child = ::fork();
  if (child == 0) _exit(0);
  REQUIRE(child > 0);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);  // its pid now belongs to no process
  const fs::path stale = d / ("r.json.tmp." + std::to_string(child));
  const fs::path other = d / "other.json.tmp.1";  // another file's temporary (and pid 1 lives)
  std::ofstream(stale) << "{\"half\":";
  std::ofstream(other) << "x";
  autoddl::write_json_atomic((d / "r.json").string(), nlohmann::json{{"whole", true}});
  CHECK_FALSE(fs::exists(stale));
  CHECK(fs::exists(other));
  CHECK(autoddl::read_json_file((d / "r.json").string()) == nlohmann::json{{"whole", true}});
  fs::remove_all(d);
}
