// Progress display of a sweep (see progress.hpp).
#include "progress.hpp"

#include <cmath>

namespace autoddl::experiments {

std::string duration_text(double s) {
  char buf[32];
  if (s < 60) std::snprintf(buf, sizeof buf, "%.0f s", s);
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  else if (s < 1e15) {  // a sweep's estimate can run to years: hours in 64 bits, not an int
    const long long whole = static_cast<long long>(s);
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", whole / 3600, whole % 3600 / 60);
  } else std::snprintf(buf, sizeof buf, "%.3g s", s);
  return buf;
}

Progress::Progress(FILE* out, bool tty, int total, int already)
    : out_(out), tty_(tty), total_(total), already_(already), t0_(std::chrono::steady_clock::now()) {}

std::string Progress::eta_text() const {
  const int finished = ok_ + failed_, left = total_ - already_ - finished;
  if (left <= 0) return "0 s";
  if (finished == 0) return "?";
  // Cells run `running` at a time: remaining work / parallelism, from this run's mean cell time.
  const double per_cell = busy_s_ / finished;
  const int par = std::max(1, running_);
  return duration_text(std::ceil(left / static_cast<double>(par)) * per_cell);
}

void Progress::draw() {
  const int done = already_ + ok_ + failed_;
  const int width = 24;
  const int fill = total_ > 0 ? done * width / total_ : width;
  std::string bar(static_cast<size_t>(fill), '#');
  bar.resize(width, '.');
  const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  std::fprintf(out_, "\r\033[K[%s] %d/%d done, %d failed, %d running, %s elapsed, ETA %s", bar.c_str(), done, total_,
               failed_, running_, duration_text(t).c_str(), eta_text().c_str());
  std::fflush(out_);
  last_draw_ = std::chrono::steady_clock::now();
}

void Progress::finished(bool ok, double wall_s, int running, const std::string& what, const std::string& error) {
  (ok ? ok_ : failed_) += 1;
  busy_s_ += wall_s;
  running_ = running;
  if (tty_) {
    if (!ok) std::fprintf(out_, "\r\033[Kfailed: %s: %s\n", what.c_str(), error.c_str());
    draw();
    return;
  }
  const int done = already_ + ok_ + failed_;
  std::fprintf(out_, "sweep: %d/%d %s %7.2f s  %s%s%s (%d running, ETA %s)\n", done, total_, ok ? "ok    " : "FAILED",
               wall_s, what.c_str(), ok ? "" : ": ", ok ? "" : error.c_str(), running_, eta_text().c_str());
  std::fflush(out_);
}

void Progress::tick(int running) {
  running_ = running;
  if (!tty_) return;
  if (std::chrono::duration<double>(std::chrono::steady_clock::now() - last_draw_).count() >= 0.2) draw();
}

void Progress::done() {
  if (tty_) {
    draw();
    std::fprintf(out_, "\n");
  }
}

}  // namespace autoddl::experiments
