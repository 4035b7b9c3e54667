#include "trainers/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace attnzoo {

std::string format_duration(double seconds) {
  if (seconds < 0) return "?";
  auto s = static_cast<int64_t>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

bool Progress::stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

Progress::Progress(std::string label, int64_t total, bool interactive)
    : label_(std::move(label)), total_(std::max<int64_t>(total, 1)), interactive_(interactive) {
  start_ = last_draw_ = std::chrono::steady_clock::now();
}

void Progress::update(int64_t done, const std::string& stats, double overall_eta) {
  auto now = std::chrono::steady_clock::now();
  double since_draw = std::chrono::duration<double>(now - last_draw_).count();
  // Redraw a terminal bar ~10 times a second; print a plain line every 15 s (and at the end).
  if (interactive_ ? since_draw < 0.1 && done < total_ : since_draw < 15.0 && done < total_) return;
  last_draw_ = now;
  double elapsed = std::chrono::duration<double>(now - start_).count();
  double eta = done > 0 ? elapsed * (total_ - done) / done : -1;
  std::string eta_text = overall_eta >= 0 ? fmt::format("eta {} (all {})", format_duration(eta), format_duration(overall_eta))
                                          : fmt::format("eta {}", format_duration(eta));
  if (interactive_) {
    const int width = 24;
    int filled = static_cast<int>(width * done / total_);
    std::string bar(filled, '#');
    bar += std::string(width - filled, '.');
    std::fprintf(stderr, "\r\033[K%s [%s] %lld/%lld %s | %s", label_.c_str(), bar.c_str(), (long long)done,
                 (long long)total_, stats.c_str(), eta_text.c_str());
    drawn_ = true;
  } else {
    std::fprintf(stderr, "%s %lld/%lld %s | %s\n", label_.c_str(), (long long)done, (long long)total_, stats.c_str(),
                 eta_text.c_str());
  }
  std::fflush(stderr);
}

void Progress::finish(bool keep) {
  if (interactive_ && drawn_) std::fprintf(stderr, keep ? "\n" : "\r\033[K");
  drawn_ = false;
  std::fflush(stderr);
}

}  // namespace attnzoo
