// The JSONL rules every results and records file follows (costmodel/jsonl.hpp): a torn last line
// is left out by readers and cut off by the appender, a whole last line without its newline is
// a record, and only regular files are read or appended to (never replaced).
#include "autoddl/costmodel/jsonl.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "input_error.hpp"

using namespace autoddl;
namespace fs = std::filesystem;

namespace {

struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("autoddl_jsonl_" + std::to_string(::getpid()));
  Scratch() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Scratch() { fs::remove_all(dir); }
  std::string put(const std::string& name, const std::string& text) const {
    const std::string path = (dir / name).string();
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
    return path;
  }
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::pair<int64_t, std::string>> lines_of(const std::string& path, JsonlScan* scan = nullptr) {
  std::vector<std::pair<int64_t, std::string>> out;
  const JsonlScan s = read_jsonl_lines(path, [&](const std::string& l, int64_t n) { out.emplace_back(n, l); });
  if (scan) *scan = s;
  return out;
}

}  // namespace

TEST_CASE("a torn last line is left out and named, a whole one without its newline is read", "[io][jsonl]") {
  Scratch s;
  JsonlScan scan;
  const std::string torn = s.put("torn.jsonl", "{\"a\":1}\n\n{\"b\":2}\n{\"c\":");
  CHECK(lines_of(torn, &scan) == std::vector<std::pair<int64_t, std::string>>{{1, "{\"a\":1}"}, {3, "{\"b\":2}"}});
  CHECK(scan.lines == 4);
  CHECK(scan.torn_line == 4);
  CHECK(torn_line_note(torn, 4, "made again") == torn + ": line 4: torn by an interrupted write (a kill) and left out; made again");

  const std::string whole = s.put("whole.jsonl", "{\"a\":1}\n{\"b\":2}");
  CHECK(lines_of(whole, &scan).size() == 2);
  CHECK(scan.torn_line == 0);

  // A bad line elsewhere is the reader's to refuse: it is passed on, not skipped.
  const std::string middle = s.put("middle.jsonl", "{\"a\":1}\n{\"b\":\n{\"c\":3}\n");
  CHECK(lines_of(middle, &scan).at(1) == std::pair<int64_t, std::string>{2, "{\"b\":"});
  CHECK(scan.torn_line == 0);
}

TEST_CASE("only regular files are read or appended to, and a link is never replaced", "[io][jsonl]") {
  Scratch s;
  const fs::path zero = s.dir / "zero.jsonl";
  fs::create_symlink("/dev/zero", zero);
  auto e = input_error_of([&] { lines_of(zero.string()); });
  REQUIRE(e);
  CHECK(e->what() == zero.string() + ": not a regular file");
  e = input_error_of([&] { JsonlLog log(zero.string()); });
  REQUIRE(e);
  CHECK(e->reason() == "not a regular file");
  CHECK(fs::is_symlink(zero));

  const std::string fifo = (s.dir / "fifo.jsonl").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  CHECK(input_error_of([&] { lines_of(fifo); })->reason() == "not a regular file");  // and no wait for a writer

  CHECK(input_error_of([&] { lines_of((s.dir / "absent.jsonl").string()); })->reason() ==
        "cannot open: No such file or directory");

  // Through a link to a regular file, the file is appended to and the link stays.
  const std::string target = s.put("target.jsonl", "{\"a\":1}\n");
  const fs::path link = s.dir / "link.jsonl";
  fs::create_symlink(target, link);
  JsonlLog(link.string()).append_line("{\"b\":2}");
  CHECK(fs::is_symlink(link));
  CHECK(slurp(target) == "{\"a\":1}\n{\"b\":2}\n");
}

TEST_CASE("the appender cuts a torn last line off and ends a whole one before appending", "[io][jsonl]") {
  Scratch s;
  const std::string torn = s.put("torn.jsonl", "{\"a\":1}\n{\"b\":2}\n{\"c\":3, \"d\"");
  {
    JsonlLog log(torn);
    CHECK(log.torn_line() == 3);
    log.append_line("{\"c\":3}");
  }
  CHECK(slurp(torn) == "{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n");

  const std::string whole = s.put("whole.jsonl", "{\"a\":1}");
  {
    JsonlLog log(whole);
    CHECK(log.torn_line() == 0);
    log.append_line("{\"b\":2}");
  }
  CHECK(slurp(whole) == "{\"a\":1}\n{\"b\":2}\n");

  const std::string only_torn = s.put("only.jsonl", "{\"a\"");
  CHECK(JsonlLog(only_torn).torn_line() == 1);
  CHECK(slurp(only_torn).empty());

  const std::string fresh = (s.dir / "new.jsonl").string();
  JsonlLog(fresh).append_line("{}");
  CHECK(slurp(fresh) == "{}\n");
}
