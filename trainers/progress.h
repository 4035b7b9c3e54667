#pragma once
// Progress display: a redrawn bar with ETA on a terminal; plain lines every few seconds otherwise
// (CI logs, pipes), so logs stay readable.
#include <chrono>
#include <map>
#include <string>

namespace attnzoo {

std::string format_duration(double seconds);  // "1:05", "1:02:03"

class Progress {
 public:
  // `label` such as "epoch 2/5"; total = units of work in this bar.
  Progress(std::string label, int64_t total, bool interactive);
  // `overall_eta` in seconds (< 0 = unknown); stats shown in order of the string.
  void update(int64_t done, const std::string& stats, double overall_eta);
  // Ends the bar: on a terminal it is cleared, or left as a summary line when `keep` is true.
  void finish(bool keep = false);
  static bool stderr_is_terminal();

 private:
  std::string label_;
  int64_t total_;
  bool interactive_;
  std::chrono::steady_clock::time_point start_, last_draw_;
  bool drawn_ = false;
};

}  // namespace attnzoo
