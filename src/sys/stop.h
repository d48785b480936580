/*
 * How a test is stopped early: SIGINT and SIGTERM, or a failed script
 * hook (which raises SIGUSR1 to end the main thread's wait). The flag
 * is set from a signal handler or a worker and read everywhere a loop
 * may end; the test ends early and still reports. Depends on nothing.
 */
#ifndef NETSTAGE_STOP_H
#define NETSTAGE_STOP_H

#include <signal.h>

enum { INTERRUPTED_SIGNAL = 1, INTERRUPTED_SCRIPT = 2 };
extern volatile sig_atomic_t interrupted;
/* SIGINT and SIGTERM caught so far (a script's analysis stops at one). */
extern volatile sig_atomic_t signals_caught;
void install_signal_handlers(void);
/* Why the test was interrupted, for the error key. */
const char *interrupted_why(void);

#endif
