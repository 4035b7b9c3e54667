#pragma once
// Ctrl-C (SIGINT) and SIGTERM ask training to stop: the trainer finishes the current step, writes a
// checkpoint and exits. A second Ctrl-C kills at once (safe: checkpoints are written atomically).
namespace attnzoo {

void install_interrupt_handler();
bool stop_requested();
void request_stop();        // as if Ctrl-C was pressed (tests)
void clear_stop_request();  // forget an earlier request (tests, a second run in one process)

}  // namespace attnzoo
