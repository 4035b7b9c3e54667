#include "trainers/interrupt.h"

#include <atomic>
#include <csignal>

namespace attnzoo {
namespace {
std::atomic<bool> g_stop{false};

void on_signal(int signal) {
  g_stop = true;
  std::signal(signal, SIG_DFL);  // the next one terminates
}
}  // namespace

void install_interrupt_handler() {
  g_stop = false;
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
}

bool stop_requested() { return g_stop.load(); }
void request_stop() { g_stop = true; }
void clear_stop_request() { g_stop = false; }

}  // namespace attnzoo
