// Atomic result files and JSON reading with located errors (see io.hpp). The parser callback
// tracks the field path as it goes, so an error thrown mid-parse (1e309, a duplicate key, too
// deep) names the field it happened in; nlohmann's parser itself is iterative (no recursion).
#include "autoddl/costmodel/io.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
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

  std::string path() const {
    std::string out;
    for (const Frame& f : frames) {
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

nlohmann::json parse_json_text(const std::string& text, const std::string& source) {
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

nlohmann::json read_json_file(const std::string& path) {
  return parse_json_text(read_text_file(path), path);
}

std::string dump_json(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

namespace {

// The temporary being written, for the signal handler: a fixed buffer (no allocation in the
// handler), published with an atomic flag. One write at a time per process.
char g_tmp_path[4096];
std::atomic<bool> g_tmp_live{false};

void unlink_temp_and_die(int sig) {
  if (g_tmp_live.load()) ::unlink(g_tmp_path);
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

}  // namespace

void install_temp_cleanup() {
  for (int sig : {SIGINT, SIGTERM}) {
    struct sigaction sa {};
    sa.sa_handler = unlink_temp_and_die;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
  }
}

void write_file_atomic(const std::string& path, const std::string& text) {
  sweep_stale_temps(path);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const bool tracked = tmp.size() < sizeof g_tmp_path;
  if (tracked) {
    std::memcpy(g_tmp_path, tmp.c_str(), tmp.size() + 1);
    g_tmp_live.store(true);
  }
  auto fail = [&](const std::string& why) {
    std::remove(tmp.c_str());
    g_tmp_live.store(false);
    throw InputError(path, "", why);
  };
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    g_tmp_live.store(false);
    throw InputError(path, "", std::string("cannot write: ") + std::strerror(errno));
  }
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      fail(std::string("write failed: ") + std::strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  // Durable before it becomes visible: a crash after the rename never shows a truncated file.
  if (::fsync(fd) != 0 || ::close(fd) != 0) fail(std::string("write failed: ") + std::strerror(errno));
  if (std::rename(tmp.c_str(), path.c_str()) != 0) fail(std::string("cannot rename into place: ") + std::strerror(errno));
  g_tmp_live.store(false);
}

void write_json_atomic(const std::string& path, const nlohmann::json& j, int indent) {
  write_file_atomic(path, dump_json(j, indent) + "\n");
}

}  // namespace autoddl
