// for_each_in_children (child_pool.hpp): a poll() loop over the pipes of up to `jobs` children.
#include "autoddl/sim/child_pool.hpp"

#include <poll.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <vector>

#include "isolation.hpp"

namespace autoddl::sim {

void for_each_in_children(size_t n, int jobs, const std::function<std::string(size_t)>& job,
                          const std::function<void(size_t, std::string&&)>& done) {
  const size_t width = static_cast<size_t>(jobs < 1 ? 1 : jobs);
  struct Running {
    Child child;
    size_t job;
  };
  std::vector<Running> running;
  std::exception_ptr failure;
  size_t next = 0;
  auto finish = [&](size_t k) {
    Running r = std::move(running[k]);
    running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
    try {
      done(r.job, finish_child(r.child));
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  };
  while (!running.empty() || (next < n && !failure)) {
    while (!failure && next < n && running.size() < width) {
      const size_t i = next++;
      try {
        running.push_back({start_child([&job, i] { return job(i); }), i});
      } catch (...) {
        failure = std::current_exception();
      }
    }
    if (running.empty()) break;
    std::vector<pollfd> fds;
    for (const Running& r : running) fds.push_back({r.child.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("simulation: poll: ") + std::strerror(errno));
    }
    // Back to front, so that finishing child k leaves the indices below it valid.
    for (size_t k = fds.size(); k-- > 0;) {
      if (fds[k].revents == 0) continue;
      if (!read_some(running[k].child)) finish(k);
    }
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace autoddl::sim
