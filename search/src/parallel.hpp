// parallel_for(n, jobs, f): f(0) .. f(n-1) on up to `jobs` threads (the calling one included),
// each index exactly once, in no particular order; the first exception (by index) is rethrown
// after every thread has joined. Callers keep results per index and combine them in index order
// afterwards, so what they compute does not depend on `jobs` (search's --jobs).
#pragma once
#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>
#include <vector>

namespace autoddl::search {

template <class F>
void parallel_for(int n, int jobs, F&& f) {
  const int workers = std::max(1, std::min(jobs, n));
  if (workers == 1) {
    for (int i = 0; i < n; ++i) f(i);
    return;
  }
  std::atomic<int> next{0};
  std::vector<std::exception_ptr> failure(n);
  auto work = [&] {
    for (int i = next++; i < n; i = next++) {
      try {
        f(i);
      } catch (...) {
        failure[i] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> threads;
  for (int w = 1; w < workers; ++w) threads.emplace_back(work);
  work();
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : failure) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace autoddl::search
