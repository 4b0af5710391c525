// JSONL files: a sweep's results*.jsonl and a sync dataset's records.jsonl. Both are written one
// line per record, each line with one write() on an O_APPEND descriptor and then fsync
// (JsonlLog), so a kill -9 can tear only the *last* line: a prefix of it, without its newline.
// Every reader and writer of these files goes through this header, so all of them agree on what
// a kill leaves:
//  - a last line without its newline is a record when it is one whole JSON value (a file edited
//    by hand without a final newline) and torn otherwise (a proper prefix of one JSON object is
//    never a whole one): readers leave a torn line out and report it, JsonlLog cuts it off
//    before it appends;
//  - a line anywhere else that its reader cannot use is an error naming the line: a kill cannot
//    make one, so something else changed the file, and guessing what it meant would be wrong.
// Only regular files are read or appended to (a link to /dev/zero or a FIFO is refused, where
// it would be read forever), and one line may hold at most kMaxInputBytes.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

namespace autoddl {

struct JsonlScan {
  int64_t lines = 0;       // lines read, empty ones and a torn last one included
  int64_t torn_line = 0;   // the number of a torn last line that was left out, or 0
};

// Calls on_line(text, line_no) for every non-empty line of the regular file `path` in order,
// line numbers from 1, a torn last line left out (see above). Throws InputError(path, "",
// reason) when the file cannot be read or is not a regular file, InputError(path, "line N",
// reason) for a line longer than kMaxInputBytes; on_line's own exceptions pass through.
JsonlScan read_jsonl_lines(const std::string& path,
                           const std::function<void(const std::string& line, int64_t line_no)>& on_line);

// The one-line note for a torn last line that was left out or cut off: "<path>: line N: torn by
// an interrupted write (kill) and left out; <consequence>".
std::string torn_line_note(const std::string& path, int64_t line_no, const std::string& consequence);

// Appends lines to one JSONL file (created if absent; only a regular file is accepted). Opening
// repairs what a kill left: a torn last line is cut off (torn_line() says which), a whole last
// line without its newline gets one. Each append is one write() and an fsync.
class JsonlLog {
 public:
  explicit JsonlLog(const std::string& path);
  ~JsonlLog();
  JsonlLog(const JsonlLog&) = delete;
  JsonlLog& operator=(const JsonlLog&) = delete;
  void append_line(const std::string& line);  // `line` holds no newline; one is added
  const std::string& path() const { return path_; }
  int64_t torn_line() const { return torn_line_; }  // the line cut off on opening, or 0

 private:
  void repair_last_line();
  std::string path_;
  int fd_ = -1;
  int64_t torn_line_ = 0;
};

}  // namespace autoddl
