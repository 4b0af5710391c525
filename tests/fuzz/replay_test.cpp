// Replays tests/fuzz/regressions/<format>/* through the fuzz targets (targets.hpp) in the
// normal test suite, without clang: every file must be accepted or rejected with InputError;
// a crash or another exception aborts this test. Each file's name is printed before it runs.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <catch2/catch.hpp>

#include "targets.hpp"

namespace fs = std::filesystem;

TEST_CASE("every file of the fuzz regression corpus is accepted or rejected with InputError, never a crash",
          "[fuzz]") {
  const fs::path root = fs::path(AUTODDL_SOURCE_DIR) / "tests" / "fuzz" / "regressions";
  REQUIRE(fs::is_directory(root));
  size_t files = 0;
  for (const auto& dir : fs::directory_iterator(root)) {
    if (!dir.is_directory()) continue;
    const autoddl::fuzz::Target* t = autoddl::fuzz::find_target(dir.path().filename().string());
    INFO("folder " << dir.path());
    REQUIRE(t != nullptr);
    std::vector<fs::path> inputs;
    for (const auto& f : fs::directory_iterator(dir.path())) {
      if (f.is_regular_file() && f.path().filename() != "README.md") inputs.push_back(f.path());
    }
    std::sort(inputs.begin(), inputs.end());
    for (const fs::path& f : inputs) {
      std::cerr << "replay " << t->format << " " << f.filename().string() << std::endl;
      std::ifstream in(f, std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      autoddl::fuzz::run_checked(*t, text.str());
      ++files;
    }
  }
  CHECK(files >= 8);
}

TEST_CASE("there is one fuzz target per loader, each with a regression folder", "[fuzz]") {
  const fs::path root = fs::path(AUTODDL_SOURCE_DIR) / "tests" / "fuzz" / "regressions";
  for (const auto& t : autoddl::fuzz::targets()) {
    INFO(t.format);
    CHECK(fs::is_directory(root / t.format));
  }
  CHECK(autoddl::fuzz::targets().size() == 15);
}
