// Result files written all or none (OutputFiles); io.hpp's write_file_atomic is one of them.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace autoddl {

// Result files written all or none. Each file is staged as `<path>.tmp.<pid>` beside its target
// (written and fsynced) in the order added; only when every one is staged are they renamed into
// place. A failure while staging (a missing directory, a target that is a directory, a full disk)
// removes every temporary and throws InputError(path, "", reason) with no target touched; so does
// a destructor that runs before commit() (an exception between add() and commit()).
// Temporaries of a target left by a process that no longer runs (a SIGKILL mid-write) are removed
// before staging it; with install_temp_cleanup(), SIGINT and SIGTERM remove the ones in flight.
class OutputFiles {
 public:
  OutputFiles() = default;
  OutputFiles(const OutputFiles&) = delete;
  OutputFiles& operator=(const OutputFiles&) = delete;
  ~OutputFiles();
  // Adds a file with the given contents; an empty path adds nothing (an option not given).
  void add(const std::string& path, std::string text);
  void add_json(const std::string& path, const nlohmann::json& j, int indent = 2);
  // Adds a file that `write(tmp)` writes itself at the temporary path (a library that saves by
  // file name); it is fsynced and renamed like the others.
  void add_written(const std::string& path, std::function<void(const std::string& tmp)> write);
  // Stages every file, then renames them all; throws InputError as above. Call once.
  void commit();

 private:
  struct Entry {
    std::string path, text, tmp;
    std::function<void(const std::string&)> write;
    int slot = -1;  // its temporary's slot in the signal handler's table, -1 if none
  };
  void stage(Entry& e);
  void discard();
  std::vector<Entry> entries_;
};

}  // namespace autoddl
