// Atomic result files and JSON reading with located errors (see io.hpp). The parser callback
// tracks the field path as it goes, so an error thrown mid-parse (1e309, a duplicate key, too
// deep) names the field it happened in; nlohmann's parser itself is iterative (no recursion).
#include "autoddl/costmodel/io.hpp"

#include <sys/stat.h>
#include <unistd.h>

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

void write_file_atomic(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(path, "", std::string("cannot write: ") + std::strerror(errno));
    out << text;
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw InputError(path, "", "write failed");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    std::remove(tmp.c_str());
    throw InputError(path, "", std::string("cannot rename into place: ") + std::strerror(err));
  }
}

void write_json_atomic(const std::string& path, const nlohmann::json& j, int indent) {
  write_file_atomic(path, dump_json(j, indent) + "\n");
}

}  // namespace autoddl
