// Reading and appending JSONL files with one rule for a torn last line (jsonl.hpp).
#include "autoddl/costmodel/jsonl.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include <nlohmann/json.hpp>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"

namespace autoddl {

namespace {

constexpr size_t kChunkBytes = size_t{1} << 20;

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::string errno_text() { return std::strerror(errno); }

// Opens `path` and checks that it is a regular file. O_NONBLOCK: opening a FIFO to read would
// otherwise wait for a writer before fstat could refuse it.
int open_regular(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC | O_NONBLOCK, 0644);
  if (fd < 0) throw InputError(path, "", "cannot open: " + errno_text());
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw InputError(path, "", "not a regular file");
  }
  return fd;
}

std::string line_field(int64_t line_no) { return "line " + std::to_string(line_no); }

void check_line_length(const std::string& path, int64_t line_no, size_t bytes) {
  if (static_cast<int64_t>(bytes) > kMaxInputBytes) {
    throw InputError(path, line_field(line_no),
                     "longer than " + std::to_string(kMaxInputBytes) + " bytes (one record a line)");
  }
}

bool blank(const std::string& text) { return text.find_first_not_of(" \t\r") == std::string::npos; }

// What a last line without its newline is (jsonl.hpp): nothing, a whole record, or torn.
enum class Tail { blank, whole, torn };
Tail classify_tail(const std::string& text) {
  if (blank(text)) return Tail::blank;
  return nlohmann::json::accept(text) ? Tail::whole : Tail::torn;
}

ssize_t pread_full(int fd, char* data, size_t n, off_t at) {
  size_t done = 0;
  while (done < n) {
    const ssize_t r = ::pread(fd, data + done, n - done, at + static_cast<off_t>(done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return r < 0 ? r : static_cast<ssize_t>(done);
    done += static_cast<size_t>(r);
  }
  return static_cast<ssize_t>(done);
}

// The offset just past the last newline of the first `end` bytes of `fd` (0 when none).
off_t after_last_newline(int fd, off_t end) {
  std::vector<char> buf(kChunkBytes);
  for (off_t hi = end; hi > 0;) {
    const off_t lo = std::max<off_t>(0, hi - static_cast<off_t>(buf.size()));
    const ssize_t n = pread_full(fd, buf.data(), static_cast<size_t>(hi - lo), lo);
    if (n <= 0) break;
    for (ssize_t i = n - 1; i >= 0; --i) {
      if (buf[static_cast<size_t>(i)] == '\n') return lo + i + 1;
    }
    hi = lo;
  }
  return 0;
}

int64_t newlines_before(int fd, off_t end) {
  std::vector<char> buf(kChunkBytes);
  int64_t count = 0;
  for (off_t at = 0; at < end;) {
    const ssize_t n = pread_full(fd, buf.data(), static_cast<size_t>(std::min<off_t>(end - at, buf.size())), at);
    if (n <= 0) break;
    count += std::count(buf.data(), buf.data() + n, '\n');
    at += n;
  }
  return count;
}

void write_all(int fd, const std::string& text, const std::string& path) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw InputError(path, "", "cannot append: " + errno_text());
    done += static_cast<size_t>(n);
  }
}

}  // namespace

JsonlScan read_jsonl_lines(const std::string& path,
                           const std::function<void(const std::string& line, int64_t line_no)>& on_line) {
  Fd in{open_regular(path, O_RDONLY)};
  JsonlScan scan;
  std::string line;
  std::vector<char> buf(kChunkBytes);
  for (;;) {
    const ssize_t n = ::read(in.fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputError(path, "", "cannot read: " + errno_text());
    if (n == 0) break;
    const char* p = buf.data();
    const char* const end = p + n;
    while (p < end) {
      const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
      const char* stop = nl ? nl : end;
      check_line_length(path, scan.lines + 1, line.size() + static_cast<size_t>(stop - p));
      line.append(p, stop);
      if (!nl) break;
      ++scan.lines;
      if (!line.empty()) on_line(line, scan.lines);
      line.clear();
      p = nl + 1;
    }
  }
  if (!line.empty()) {  // the last line has no newline
    ++scan.lines;
    const Tail tail = classify_tail(line);
    if (tail == Tail::whole) on_line(line, scan.lines);
    if (tail == Tail::torn) scan.torn_line = scan.lines;
  }
  return scan;
}

std::string torn_line_note(const std::string& path, int64_t line_no, const std::string& consequence) {
  return safe_text(path) + ": " + line_field(line_no) + ": torn by an interrupted write (a kill) and left out; " +
         consequence;
}

JsonlLog::JsonlLog(const std::string& path) : path_(path) {
  fd_ = open_regular(path, O_RDWR | O_CREAT | O_APPEND);
  try {
    repair_last_line();
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

JsonlLog::~JsonlLog() {
  if (fd_ >= 0) ::close(fd_);
}

void JsonlLog::repair_last_line() {
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || st.st_size == 0) return;
  char last = 0;
  if (pread_full(fd_, &last, 1, st.st_size - 1) != 1 || last == '\n') return;
  const off_t keep = after_last_newline(fd_, st.st_size);
  const int64_t line_no = newlines_before(fd_, keep) + 1;
  check_line_length(path_, line_no, static_cast<size_t>(st.st_size - keep));
  std::string tail(static_cast<size_t>(st.st_size - keep), '\0');
  if (pread_full(fd_, tail.data(), tail.size(), keep) != static_cast<ssize_t>(tail.size())) {
    throw InputError(path_, "", "cannot read: " + errno_text());
  }
  const Tail kind = classify_tail(tail);
  if (kind == Tail::whole) {  // a record without its newline: keep it, end the line
    write_all(fd_, "\n", path_);
    return;
  }
  if (::ftruncate(fd_, keep) != 0) throw InputError(path_, line_field(line_no), "cannot cut off a torn last line");
  if (kind == Tail::torn) torn_line_ = line_no;
}

void JsonlLog::append_line(const std::string& line) {
  write_all(fd_, line + "\n", path_);  // one write() for any line a local file system takes at once
  ::fsync(fd_);
}

}  // namespace autoddl
