// Atomic outputs (issue 17): a result file appears whole or not at all, and a command's several
// outputs all or none. A search killed with SIGKILL or SIGTERM mid-run leaves neither the file nor
// a temporary; killed while writing, it leaves no result (SIGKILL: temporaries, which the next run
// sweeps); a temporary left by a dead process is swept by the next write of the same file.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "autoddl/costmodel/io.hpp"
#include "autoddl/costmodel/output_files.hpp"
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

namespace {

// Runs autoddl with `args` after placing a FIFO at the temporary name `<fifo_for>.tmp.<pid>` of
// the child's own pid: the child (the same pid after exec) blocks when it opens that temporary,
// i.e. exactly while staging its outputs, until it is killed.
pid_t spawn_blocked_in_write(const std::vector<std::string>& args, const fs::path& fifo_for, const fs::path& log) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const std::string fifo = fifo_for.string() + ".tmp." + std::to_string(::getpid());
    if (::mkfifo(fifo.c_str(), 0644) != 0) _exit(97);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    std::vector<std::string> all = {AUTODDL_BINARY};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    _exit(98);
  }
  return pid;
}

}  // namespace

TEST_CASE("a search killed while writing its outputs leaves no result, and the next run sweeps its temporaries",
          "[experiments][atomic]") {
  // search stages --out (s.json) first, then --json (r.json): the kill lands with s.json's
  // temporary complete and r.json's being opened.
  for (int sig : {SIGKILL, SIGTERM}) {
    INFO("signal " << sig);
    const fs::path d = sweep_test::scratch("midwrite_" + std::to_string(sig));
    const fs::path log = d.string() + ".log";
    const pid_t p = spawn_blocked_in_write({"search", "--model", "mlp", "--cluster", "dgx-a100", "--nodes", "1",
                                            "--method", "cd", "--out", (d / "s.json").string(), "--json",
                                            (d / "r.json").string()},
                                           d / "r.json", log);
    const fs::path staged = d / ("s.json.tmp." + std::to_string(p));
    for (int i = 0; i < 600 && !fs::exists(staged); ++i) ::usleep(50000);  // up to 30 s on a loaded machine
    REQUIRE(fs::exists(staged));
    ::usleep(100000);
    ::kill(p, sig);
    REQUIRE(sweep_test::wait_exit(p) == 128 + sig);
    CHECK_FALSE(fs::exists(d / "s.json"));  // neither output, though s.json was complete
    CHECK_FALSE(fs::exists(d / "r.json"));
    // SIGTERM's handler removes both temporaries; after SIGKILL they stay for the next run.
    CHECK(entries(d).size() == (sig == SIGKILL ? 2u : 0u));
    REQUIRE(sweep_test::run_autoddl({"cost", "--model", "mlp", "--cluster", "dgx-a100", "--nodes", "1", "--scheme",
                                     "dp", "--json", (d / "r.json").string(), "--out", (d / "s.json").string()},
                                    log.string()) == 0);
    std::vector<std::string> after = entries(d);
    std::sort(after.begin(), after.end());
    CHECK(after == std::vector<std::string>{"r.json", "s.json"});
    fs::remove_all(d);
    fs::remove(log);
  }
}

TEST_CASE("several outputs are written all or none", "[experiments][atomic]") {
  const fs::path d = sweep_test::scratch("all_or_none");
  const std::string first = (d / "first.json").string();
  auto check_nothing_written = [&] {
    CHECK(entries(d) == std::vector<std::string>{"sub"});  // no first.json, no temporary
  };
  fs::create_directory(d / "sub");
  SECTION("the second is in a missing directory") {
    autoddl::OutputFiles out;
    out.add_json(first, {{"a", 1}});
    out.add_json((d / "missing" / "second.json").string(), {{"b", 2}});
    CHECK_THROWS_AS(out.commit(), autoddl::InputError);
    check_nothing_written();
  }
  SECTION("the second is a directory") {
    autoddl::OutputFiles out;
    out.add_json(first, {{"a", 1}});
    out.add_json((d / "sub").string(), {{"b", 2}});
    CHECK_THROWS_WITH(out.commit(), Catch::Contains("is a directory"));
    check_nothing_written();
  }
  SECTION("the second's writer fails") {
    autoddl::OutputFiles out;
    out.add_json(first, {{"a", 1}});
    out.add_written((d / "model.bin").string(), [](const std::string& tmp) {
      std::ofstream(tmp) << "half";
      throw autoddl::InputError("ranker", "", "cannot save");
    });
    CHECK_THROWS_AS(out.commit(), autoddl::InputError);
    check_nothing_written();
  }
  SECTION("one file named twice") {
    autoddl::OutputFiles out;
    out.add_json(first, {{"a", 1}});
    out.add_json((d / "sub" / ".." / "first.json").string(), {{"b", 2}});
    CHECK_THROWS_WITH(out.commit(), Catch::Contains("named for two outputs"));
    check_nothing_written();
  }
  SECTION("never committed (an error between add and commit)") {
    { autoddl::OutputFiles out; out.add_json(first, {{"a", 1}}); }
    check_nothing_written();
  }
  SECTION("all succeed") {
    autoddl::OutputFiles out;
    out.add_json(first, {{"a", 1}});
    out.add_written((d / "sub" / "model.bin").string(), [](const std::string& tmp) { std::ofstream(tmp) << "model"; });
    out.add("", "an option not given");
    out.commit();
    CHECK(autoddl::read_json_file(first) == nlohmann::json{{"a", 1}});
    CHECK(sweep_test::read_all((d / "sub" / "model.bin").string()) == "model");
    CHECK(entries(d).size() == 2);
    CHECK(entries(d / "sub") == std::vector<std::string>{"model.bin"});
  }
  fs::remove_all(d);
}
