// Reading and appending sweep result rows (see results.hpp for the on-disk contract).
#include "autoddl/experiments/results.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"

namespace autoddl::experiments {

namespace fs = std::filesystem;
using nlohmann::json;

ResultLog::ResultLog(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw InputError(path, "", std::string("cannot open for appending: ") + std::strerror(errno));
  // A kill inside write() can leave a last line without its newline: cut it off, so the next
  // append starts a fresh line (that cell was not recorded and runs again).
  struct stat st {};
  if (fstat(fd_, &st) == 0 && st.st_size > 0) {
    off_t end = st.st_size, keep = 0;
    char last = 0;
    if (pread(fd_, &last, 1, end - 1) == 1 && last != '\n') {
      std::string buf(static_cast<size_t>(std::min<off_t>(end, 1 << 20)), '\0');
      for (off_t hi = end; hi > 0 && keep == 0;) {
        const off_t lo = std::max<off_t>(0, hi - static_cast<off_t>(buf.size()));
        const ssize_t n = pread(fd_, buf.data(), static_cast<size_t>(hi - lo), lo);
        if (n <= 0) break;
        for (ssize_t i = n - 1; i >= 0; --i) {
          if (buf[i] == '\n') {
            keep = lo + i + 1;
            break;
          }
        }
        hi = lo;
      }
      if (ftruncate(fd_, keep) != 0) throw InputError(path, "", "cannot trim a torn last line");
    }
  }
}

ResultLog::~ResultLog() {
  if (fd_ >= 0) ::close(fd_);
}

void ResultLog::append(const json& row) {
  const std::string line = dump_json(row) + "\n";  // dump() escapes newlines: one row, one line
  size_t done = 0;
  while (done < line.size()) {  // one write() for any line a local file system takes at once
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw InputError(path_, "", std::string("cannot append: ") + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  ::fsync(fd_);
}

std::string results_file_name(int shard_index, int shard_count) {
  if (shard_count <= 1) return "results.jsonl";
  return "results.shard-" + std::to_string(shard_index) + "-of-" + std::to_string(shard_count) + ".jsonl";
}

std::vector<ResultRow> read_result_rows(const std::string& dir, int* skipped) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && name.rfind("results", 0) == 0 && name.size() > 6 &&
        name.substr(name.size() - 6) == ".jsonl") {
      files.push_back(e.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  std::vector<ResultRow> rows;
  int bad = 0;
  for (const std::string& f : files) {
    const std::string text = read_text_file(f);
    size_t pos = 0;
    int line = 0;
    while (pos < text.size()) {
      const size_t nl = text.find('\n', pos);
      ++line;
      if (nl == std::string::npos) {  // torn last line: the cell was not recorded
        ++bad;
        break;
      }
      const std::string l = text.substr(pos, nl - pos);
      pos = nl + 1;
      if (l.empty()) continue;
      json j = json::parse(l, nullptr, false);
      if (j.is_discarded() || !j.is_object() || !j.contains("key") || !j["key"].is_string()) {
        ++bad;
        continue;
      }
      rows.push_back({std::move(j), f, line});
    }
  }
  if (skipped) *skipped = bad;
  return rows;
}

std::map<std::string, ResultRow> latest_rows(const std::vector<ResultRow>& rows) {
  std::map<std::string, ResultRow> out;
  for (const ResultRow& r : rows) {
    auto it = out.find(r.key());
    if (it == out.end()) out.emplace(r.key(), r);
    else if (r.ok() || !it->second.ok()) it->second = r;
  }
  return out;
}

void write_sweep_manifest(const std::string& dir, const SweepConfig& config, const std::vector<Cell>& cells) {
  json j = {{"name", config.name}, {"config_file", config.file}, {"config", config.raw}};
  j["cells"] = json::array();
  for (const Cell& c : cells) j["cells"].push_back({{"key", c.key}, {"inputs", c.inputs}});
  const std::string path = dir + "/sweep.json";
  // Shards of one sweep write the same text; skip the write when it is already there.
  std::ifstream in(path);
  if (in) {
    json old = json::parse(in, nullptr, false);
    if (!old.is_discarded() && old == j) return;
  }
  write_json_atomic(path, j, 1);
}

json read_sweep_manifest(const std::string& dir) {
  const std::string path = dir + "/sweep.json";
  if (!fs::is_regular_file(path)) throw InputError(path, "", "not a sweep directory (no sweep.json)");
  json j = read_json_file(path);
  if (!j.is_object() || !j.contains("cells") || !j["cells"].is_array()) throw InputError(path, "cells", "missing");
  for (size_t i = 0; i < j["cells"].size(); ++i) {
    const json& c = j["cells"][i];
    if (!c.is_object() || !c.contains("key") || !c["key"].is_string() || !c.contains("inputs")) {
      throw InputError(path, "cells[" + std::to_string(i) + "]", "needs key and inputs");
    }
  }
  return j;
}

std::string utc_now_text() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace autoddl::experiments
