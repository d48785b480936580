#include <signal.h>

#include "sys/stop.h"

volatile sig_atomic_t interrupted;
volatile sig_atomic_t signals_caught;

static void on_signal(int sig)
{
	/* SIGUSR1 is a failed script hook's (engine_fail()). */
	if (sig != SIGUSR1)
		signals_caught++;
	if (!interrupted)
		interrupted = INTERRUPTED_SIGNAL;
}

const char *interrupted_why(void)
{
	return interrupted == INTERRUPTED_SCRIPT ? "stopped by a script error"
						 : "interrupted";
}

void install_signal_handlers(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	/* No SA_RESTART: a blocking poll returns EINTR and sees the flag. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}
