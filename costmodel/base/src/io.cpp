// Atomic result files (io.hpp, output_files.hpp) and JSON reading with located errors (io.hpp). The parser callback
// tracks the field path as it goes, so an error thrown mid-parse (1e309, a duplicate key, too
// deep) names the field it happened in; nlohmann's parser itself is iterative (no recursion).
#include "autoddl/costmodel/io.hpp"
#include "autoddl/costmodel/output_files.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include "autoddl/costmodel/error.hpp"

namespace autoddl {

namespace {

// Where the parser is: one frame per open object/array.
struct PathTracker {
  struct Frame {
    bool array = false;
    size_t index = 0;
    std::string key;
    std::set<std::string> keys;
  };
  std::vector<Frame> frames;

  // The path of the first `depth` frames (all by default).
  std::string path(size_t depth = SIZE_MAX) const {
    std::string out;
    for (size_t i = 0; i < frames.size() && i < depth; ++i) {
      const Frame& f = frames[i];
      if (f.array) {
        out += "[" + std::to_string(f.index) + "]";
      } else if (!f.key.empty() || !f.keys.empty()) {
        out += (out.empty() ? "" : ".") + f.key;
      }
    }
    return out;
  }
  void element_done() {
    if (!frames.empty() && frames.back().array) ++frames.back().index;
  }
};

// "line L:C" of byte offset `byte` (1-based, as nlohmann reports it).
std::string line_col(const std::string& text, size_t byte) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i + 1 < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return "line " + std::to_string(line) + ":" + std::to_string(col);
}

}  // namespace

std::string read_text_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw InputError(path, "", std::string("cannot open: ") + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) throw InputError(path, "", "not a regular file");
  if (st.st_size > kMaxInputBytes) {
    throw InputError(path, "", "file too large (" + std::to_string(st.st_size) + " bytes; at most " +
                                   std::to_string(kMaxInputBytes) + ")");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", std::string("cannot open: ") + std::strerror(errno));
  std::string text;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (static_cast<int64_t>(text.size()) > kMaxInputBytes) throw InputError(path, "", "file too large");
  }
  return text;
}

nlohmann::json parse_json_text(const std::string& text, const std::string& source, const JsonObjectHook& hook) {
  using json = nlohmann::json;
  PathTracker at;
  auto callback = [&](int /*depth*/, json::parse_event_t event, json& parsed) -> bool {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        if (static_cast<int>(at.frames.size()) >= kMaxJsonDepth) {
          throw InputError(source, at.path(),
                           "nested more than " + std::to_string(kMaxJsonDepth) + " levels deep");
        }
        at.frames.push_back({event == json::parse_event_t::array_start, 0, "", {}});
        break;
      case json::parse_event_t::key: {
        PathTracker::Frame& f = at.frames.back();
        f.key = parsed.get<std::string>();
        if (!f.keys.insert(f.key).second) throw InputError(source, at.path(), "duplicate key");
        break;
      }
      case json::parse_event_t::object_end:
        // The object's own path: its frame (the last) holds only the key read last.
        if (hook) hook(at.path(at.frames.size() - 1), parsed);
        [[fallthrough]];
      case json::parse_event_t::array_end:
        at.frames.pop_back();
        at.element_done();
        break;
      case json::parse_event_t::value:
        at.element_done();
        break;
    }
    return true;
  };
  try {
    return json::parse(text, callback);
  } catch (const json::parse_error& e) {
    throw InputError(source, line_col(text, e.byte), "malformed JSON");
  } catch (const json::out_of_range&) {
    throw InputError(source, at.path(), "number is outside the range of a double");
  } catch (const json::exception& e) {
    throw InputError(source, at.path(), std::string("malformed JSON (") + e.what() + ")");
  }
}

nlohmann::json read_json_file(const std::string& path, const JsonObjectHook& hook) {
  return parse_json_text(read_text_file(path), path, hook);
}

std::string dump_json(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

namespace {

// The temporaries being written, for the signal handler: fixed buffers (no allocation in the
// handler), each published with an atomic state (0 free, 1 being filled, 2 live).
constexpr int kTempSlots = 32;
constexpr size_t kTempPathMax = 4096;
char g_tmp_path[kTempSlots][kTempPathMax];
std::atomic<int> g_tmp_state[kTempSlots];

int claim_temp_slot(const std::string& tmp) {
  if (tmp.size() >= kTempPathMax) return -1;
  for (int i = 0; i < kTempSlots; ++i) {
    int expected = 0;
    if (!g_tmp_state[i].compare_exchange_strong(expected, 1)) continue;
    std::memcpy(g_tmp_path[i], tmp.c_str(), tmp.size() + 1);
    g_tmp_state[i].store(2);
    return i;
  }
  return -1;  // not tracked: a signal would leave it for the next run's sweep
}

void release_temp_slot(int& slot) {
  if (slot >= 0) g_tmp_state[slot].store(0);
  slot = -1;
}

void unlink_temps_and_die(int sig) {
  for (int i = 0; i < kTempSlots; ++i) {
    if (g_tmp_state[i].load() == 2) ::unlink(g_tmp_path[i]);
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

// Removes `<name>.tmp.<pid>` beside `path` whose process is gone (kill(pid, 0) says ESRCH).
void sweep_stale_temps(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  const std::string prefix = (slash == std::string::npos ? path : path.substr(slash + 1)) + ".tmp.";
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string pid_text = name.substr(prefix.size());
    if (pid_text.empty() || pid_text.size() > 9 || pid_text.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(pid_text));
    if (pid != ::getpid() && ::kill(pid, 0) != 0 && errno == ESRCH) ::unlink((dir + "/" + name).c_str());
  }
  ::closedir(d);
}

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// Writes all of `text` to the new file `tmp` and fsyncs it; returns "" or the reason it failed.
std::string write_and_sync(const std::string& tmp, const std::string& text) {
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return errno_text("cannot write");
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::string why = errno_text("write failed");
      ::close(fd);
      return why;
    }
    done += static_cast<size_t>(n);
  }
  // Durable before it becomes visible: a crash after the rename never shows a truncated file.
  if (::fsync(fd) != 0) {
    std::string why = errno_text("write failed");
    ::close(fd);
    return why;
  }
  return ::close(fd) == 0 ? "" : errno_text("write failed");
}

// fsyncs a file something else wrote at `tmp`; returns "" or the reason.
std::string sync_existing(const std::string& tmp) {
  const int fd = ::open(tmp.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno_text("was not written");
  const bool ok = ::fsync(fd) == 0;
  std::string why = ok ? "" : errno_text("write failed");
  ::close(fd);
  return why;
}

}  // namespace

void install_temp_cleanup() {
  for (int sig : {SIGINT, SIGTERM}) {
    struct sigaction sa {};
    sa.sa_handler = unlink_temps_and_die;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
  }
}

OutputFiles::~OutputFiles() { discard(); }

void OutputFiles::add(const std::string& path, std::string text) {
  if (!path.empty()) entries_.push_back({path, std::move(text), "", nullptr, -1});
}

void OutputFiles::add_json(const std::string& path, const nlohmann::json& j, int indent) {
  if (!path.empty()) add(path, dump_json(j, indent) + "\n");
}

void OutputFiles::add_written(const std::string& path, std::function<void(const std::string& tmp)> write) {
  if (!path.empty()) entries_.push_back({path, "", "", std::move(write), -1});
}

void OutputFiles::discard() {
  for (Entry& e : entries_) {
    if (!e.tmp.empty()) ::unlink(e.tmp.c_str());
    e.tmp.clear();
    release_temp_slot(e.slot);
  }
}

void OutputFiles::stage(Entry& e) {
  struct stat st {};
  if (::stat(e.path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) throw InputError(e.path, "", "is a directory");
  sweep_stale_temps(e.path);
  e.tmp = e.path + ".tmp." + std::to_string(::getpid());
  e.slot = claim_temp_slot(e.tmp);
  std::string why;
  if (e.write) {
    e.write(e.tmp);
    why = sync_existing(e.tmp);
  } else {
    why = write_and_sync(e.tmp, e.text);
  }
  if (!why.empty()) throw InputError(e.path, "", why);
}

void OutputFiles::commit() {
  try {
    std::set<std::string> targets;
    for (const Entry& e : entries_) {
      std::error_code ec;
      const std::string same = std::filesystem::weakly_canonical(e.path, ec).string();
      if (!targets.insert(ec ? e.path : same).second) throw InputError(e.path, "", "named for two outputs");
    }
    for (Entry& e : entries_) stage(e);
  } catch (...) {
    discard();
    throw;
  }
  // Every file is staged; renames within a directory do not fail short of the disk vanishing.
  for (Entry& e : entries_) {
    if (std::rename(e.tmp.c_str(), e.path.c_str()) != 0) {
      const std::string why = errno_text("cannot rename into place");
      discard();
      throw InputError(e.path, "", why);
    }
    e.tmp.clear();
    release_temp_slot(e.slot);
  }
  entries_.clear();
}

void write_file_atomic(const std::string& path, const std::string& text) {
  OutputFiles out;
  out.add(path, text);
  out.commit();
}

void write_json_atomic(const std::string& path, const nlohmann::json& j, int indent) {
  write_file_atomic(path, dump_json(j, indent) + "\n");
}

}  // namespace autoddl
