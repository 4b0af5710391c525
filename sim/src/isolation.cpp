// fork() + pipe isolation of simulations (see isolation.hpp). The child writes one tag byte
// ('R' result, 'I' InputError, 'M' out of memory, 'E' other error) and a payload, then _exit()s without running
// the parent's atexit handlers or destructors. The parent reads to EOF before waiting, so a
// result larger than the pipe buffer cannot deadlock. fork() copies only the calling thread:
// call from a process whose other threads hold no locks the child needs (glibc's malloc is
// fork-safe; simulations in parallel should use processes, as `autoddl sweep --jobs` does).
#include "isolation.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <new>
#include <iostream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "autoddl/costmodel/error.hpp"

namespace autoddl::sim {

namespace {
bool write_all(int fd, const char* data, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

[[noreturn]] void child_main(int fd, const std::function<std::string()>& body) {
  // A crash must kill the child quietly: the parent's handlers (a test framework's, say)
  // would report it a second time from here.
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTERM, SIGINT}) std::signal(sig, SIG_DFL);
  std::string out;
  try {
    out = "R" + body();
  } catch (const InputError& e) {
    out = "I" + nlohmann::json{{"file", e.file()}, {"field", e.field()}, {"reason", e.reason()}}.dump(
                    -1, ' ', false, nlohmann::json::error_handler_t::replace);
  } catch (const std::bad_alloc&) {  // rethrown as itself: "out of memory", not the library's text
    out = "M";
  } catch (const std::exception& e) {
    out = std::string("E") + e.what();
  } catch (...) {
    out = "Eunknown exception";
  }
  bool ok = write_all(fd, out.data(), out.size());
  ::close(fd);
  ::_exit(ok ? 0 : 3);
}
}  // namespace

Child start_child(const std::function<std::string()>& body) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error(std::string("simulation: pipe: ") + std::strerror(errno));
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(std::string("simulation: fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    child_main(fds[1], body);
  }
  ::close(fds[1]);
  return {pid, fds[0], {}};
}

bool read_some(Child& c) {
  char buf[1 << 16];
  for (;;) {
    ssize_t r = ::read(c.fd, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    c.data.append(buf, static_cast<size_t>(r));
    return true;
  }
}

std::string finish_child(Child& c) {
  ::close(c.fd);
  c.fd = -1;
  int status = 0;
  while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
  }
  std::string data = std::move(c.data);
  // A dead child is reported as one error line (InputError), not an uncaught exception: the
  // usual cause is a platform too large for the memory or address-space limit.
  if (WIFSIGNALED(status))
    throw InputError("simulation", "", "the simulator process died (signal " + std::to_string(WTERMSIG(status)) +
                                           ": " + strsignal(WTERMSIG(status)) +
                                           "); the platform may be too large for the memory limit");
  if (data.empty() || (WIFEXITED(status) && WEXITSTATUS(status) != 0))
    throw InputError("simulation", "", "the simulator process failed (exit " +
                                           std::to_string(WEXITSTATUS(status)) + ")");
  const char tag = data[0];
  data.erase(0, 1);
  if (tag == 'R') return data;
  if (tag == 'M') throw std::bad_alloc();
  if (tag == 'I') {
    auto j = nlohmann::json::parse(data);
    throw InputError(j.at("file").get<std::string>(), j.at("field").get<std::string>(),
                     j.at("reason").get<std::string>());
  }
  throw std::runtime_error("simulation: " + data);
}

std::string run_in_child(const std::function<std::string()>& body) {
  Child c = start_child(body);
  while (read_some(c)) {
  }
  return finish_child(c);
}

void claim_in_process_engine() {
  static std::atomic<bool> used{false};
  if (used.exchange(true))
    throw std::logic_error(
        "SimGrid 3.32 allows one Engine per process: use Isolation::fork for a second simulation");
}

}  // namespace autoddl::sim
