// Runs many independent jobs in parallel, each in its own fork()ed process, driven from the
// calling thread. Why not threads: a simulation already runs in a forked child (SimGrid 3.32
// allows one Engine per process), and fork() from a multi-threaded process is unsafe: under
// AddressSanitizer (GCC 12's libasan) a child forked while another thread holds the allocator
// lock deadlocks. Here the parent never has a second thread, so every fork is safe, and a
// job's own simulations fork again from a single-threaded child.
#pragma once
#include <cstddef>
#include <functional>
#include <string>

namespace autoddl::sim {

// Runs job(i) for i in [0, n) with at most `jobs` children at once. `done(i, bytes)` is
// called in the calling thread, in completion order, with what job(i) returned. After the
// first failure no new child starts, the running ones finish (their results still reach
// `done`), and the failure is rethrown as run_in_child reports it (InputError keeps file,
// field and reason; a child that dies becomes one InputError line). jobs <= 1 still forks
// (one child at a time), so results never depend on `jobs`.
void for_each_in_children(size_t n, int jobs, const std::function<std::string(size_t)>& job,
                          const std::function<void(size_t, std::string&&)>& done);

}  // namespace autoddl::sim
