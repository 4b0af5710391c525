// Sweep progress on stderr: on a terminal one bar redrawn in place (done, failed, running, ETA);
// otherwise one plain line per finished cell, so logs (Slurm's) read top to bottom.
#pragma once
#include <chrono>
#include <cstdio>
#include <string>

namespace autoddl::experiments {

class Progress {
 public:
  Progress(FILE* out, bool tty, int total, int already);
  void started(int running) { running_ = running; }
  // A cell finished (`ok` or failed) after `wall_s`; `what` describes it, `error` when failed.
  void finished(bool ok, double wall_s, int running, const std::string& what, const std::string& error);
  void tick(int running);  // redraws the bar at most every 0.2 s (tty only)
  void done();             // clears the bar

 private:
  void draw();
  std::string eta_text() const;
  FILE* out_;
  bool tty_;
  int total_, already_, ok_ = 0, failed_ = 0, running_ = 0;
  double busy_s_ = 0;  // summed cell wall times of this run, for the ETA
  std::chrono::steady_clock::time_point t0_, last_draw_;
};

std::string duration_text(double s);  // "42 s", "3m05s", "1h02m"

}  // namespace autoddl::experiments
