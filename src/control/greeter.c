#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "control/auth.h"
#include "core/common.h"
#include "control/greeter.h"
#include "net/net.h"

/* Drops said on stderr at most; the rest are counted only. */
#define LOG_MAX 5

void greeter_init(struct greeter *g, int listen_fd, int timeout_ms,
		  const struct auth_key *key)
{
	memset(g, 0, sizeof(*g));
	g->listen_fd = listen_fd;
	g->timeout_ms = timeout_ms;
	g->key = key;
	g->peer = xcalloc(GREET_MAX, sizeof(*g->peer));
	/* accept() until EAGAIN: the queue is drained in one go. */
	net_set_nonblock(listen_fd, 1);
}

static void drop(struct greeter *g, int i, const char *why)
{
	close(g->peer[i].fd);
	if (g->dropped < LOG_MAX)
		log_err("dropped a control connection: %s%s", why,
			g->dropped + 1 == LOG_MAX ?
			" (more are counted in invalid_secret_count)" : "");
	g->dropped++;
	g->peer[i] = g->peer[--g->n];
}

/* The oldest waiting peer not known to have spoken, or -1. */
static int oldest_silent(const struct greeter *g)
{
	int i, old = -1;

	for (i = 0; i < g->n; i++)
		if (!g->peer[i].spoke &&
		    (old < 0 || g->peer[i].deadline < g->peer[old].deadline))
			old = i;
	return old;
}

/*
 * Room for one more. A peer that has sent nothing goes first, the
 * oldest of them: a flood of idle connections, from any number of
 * sources, only ever pushes out its own. One whose hello has come,
 * read or still in its socket (FIONREAD: the queue may be drained
 * before any hello is read), is pushed out only when every waiting
 * peer has spoken: then the oldest goes.
 */
static void make_room(struct greeter *g, const char *why)
{
	int i, n = 0;

	while ((i = oldest_silent(g)) >= 0) {
		if (ioctl(g->peer[i].fd, FIONREAD, &n) || n <= 0) {
			drop(g, i, why);
			return;
		}
		g->peer[i].spoke = 1;
	}
	for (i = 1, n = 0; i < g->n; i++)
		if (g->peer[i].deadline < g->peer[n].deadline)
			n = i;
	drop(g, n, why);
}

/* Take every connection queued on the listener: 0, or -1 (errno). */
static int accept_all(struct greeter *g)
{
	for (;;) {
		int fd = accept4(g->listen_fd, NULL, NULL,
				 SOCK_CLOEXEC | SOCK_NONBLOCK);
		struct greet_peer *p;

		if (fd < 0 && (errno == EMFILE || errno == ENFILE) && g->n) {
			make_room(g, "out of descriptors for newer ones");
			continue;
		}
		if (fd < 0 && (errno == EINTR || errno == ECONNABORTED))
			continue;
		if (fd < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
		if (g->n == GREET_MAX)
			make_room(g, "too many connections waiting");
		p = &g->peer[g->n++];
		p->fd = fd;
		p->have = 0;
		p->challenged = 0;
		p->spoke = 0;
		p->deadline = now_ns() + (uint64_t)g->timeout_ms * 1000000;
	}
}

/* Peer i sent its HELLO: send it a CHALLENGE. 0, or -1 dropped. */
static int challenge(struct greeter *g, int i, const struct ctl_msg *hello)
{
	struct greet_peer *p = &g->peer[i];
	struct ctl_msg c = { .type = CTL_CHALLENGE };
	uint8_t buf[CTL_MAX_MSG];
	int n;

	auth_challenge(p->nonce);
	memcpy(c.f, p->nonce, sizeof(p->nonce));
	n = ctl_encode(&c, buf, sizeof(buf));
	/* A few dozen bytes to a fresh socket: they fit, or it is gone. */
	if (n < 0 || send(p->fd, buf, n, MSG_DONTWAIT | MSG_NOSIGNAL) != n) {
		drop(g, i, "it went away before its challenge");
		return -1;
	}
	p->hello = *hello;
	p->challenged = 1;
	p->have = 0;
	return 0;
}

/* Peer i's AUTH: 1 with its HELLO in m if it proves the key, else -1. */
static int answered(struct greeter *g, int i, struct ctl_msg *m)
{
	struct greet_peer *p = &g->peer[i];

	if (!auth_check(g->key, p->nonce, m->f)) {
		drop(g, i, "wrong auth key");
		return -1;
	}
	*m = p->hello;
	return 1;
}

/*
 * Read from peer i: 1 with a whole HELLO (with a key: a proven one) in
 * m, 0 for more, -1 dropped.
 */
static int feed(struct greeter *g, int i, struct ctl_msg *m)
{
	struct greet_peer *p = &g->peer[i];
	unsigned int want = p->challenged ? CTL_AUTH : CTL_HELLO;
	ssize_t r = recv(p->fd, p->buf + p->have, sizeof(p->buf) - p->have,
			 0);
	int n, v;

	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (r <= 0) {
		drop(g, i, p->challenged ? "it went away before its answer" :
		     "it went away before its hello");
		return -1;
	}
	p->have += r;
	p->spoke = 1;
	n = ctl_decode(p->buf, p->have, m);
	if (!n)
		return 0;
	v = n < 0 ? ctl_version_of(p->buf, p->have) : -1;
	if (v >= 0 && v != CTL_VERSION) {
		drop(g, i, "a netstage of another version (its control "
		     "protocol is not this one's): run one build on both ends");
		return -1;
	}
	/* A client says nothing more before the server's answer. */
	if (n < 0 || m->type != want || (size_t)n != p->have) {
		drop(g, i, p->challenged ? "no answer to its challenge" :
		     "not a netstage hello");
		return -1;
	}
	if (p->challenged)
		return answered(g, i, m);
	if (g->key)
		return challenge(g, i, m);
	return 1;
}

static void expire(struct greeter *g, uint64_t now)
{
	int i;

	for (i = g->n - 1; i >= 0; i--)
		if (g->peer[i].deadline <= now)
			drop(g, i, g->peer[i].challenged ?
			     "no answer to its challenge in time" :
			     "no hello in time");
}

/* ms until the first deadline (a peer's or the tick), -1 with none. */
static int next_timeout(const struct greeter *g, uint64_t now,
			uint64_t tick)
{
	uint64_t first = tick ? tick : UINT64_MAX;
	int i;

	for (i = 0; i < g->n; i++)
		if (g->peer[i].deadline < first)
			first = g->peer[i].deadline;
	if (first == UINT64_MAX)
		return -1;
	return first > now ? (int)((first - now + 999999) / 1000000) : 0;
}

/*
 * Peer i's descriptor leaves the greeter, blocking again; -1 if its
 * client has already gone (a hello, then a close): dropped.
 */
static int take(struct greeter *g, int i)
{
	int fd = g->peer[i].fd;
	ssize_t r;
	char c;

	/* 0: closed; an error (a reset) but for "nothing yet": gone too. */
	r = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
		       errno != EINTR)) {
		drop(g, i, "it went away after its hello");
		return -1;
	}
	g->peer[i] = g->peer[--g->n];
	net_set_nonblock(fd, 0);
	return fd;
}

int greeter_next(struct greeter *g, struct ctl_msg *hello,
		 volatile const int *stop, char *err, size_t len)
{
	struct pollfd pfd[GREET_MAX + 1];
	uint64_t tick = g->tick_ms ? now_ns() + g->tick_ms * 1000000ULL : 0;
	int i, n, rc;

	for (;;) {
		uint64_t now = now_ns();

		if (*stop) {
			snprintf(err, len, "accept: interrupted");
			return -1;
		}
		if (tick && now >= tick)
			return GREET_TICK;
		expire(g, now);
		pfd[0] = (struct pollfd){ .fd = g->listen_fd, .events = POLLIN };
		for (i = 0; i < g->n; i++)
			pfd[i + 1] = (struct pollfd){ .fd = g->peer[i].fd,
						      .events = POLLIN };
		n = g->n;
		rc = poll(pfd, n + 1, next_timeout(g, now, tick));
		if (rc <= 0)
			continue;
		/* Last to first: a drop moves only peers behind the one read. */
		for (i = n; i >= 1; i--) {
			int fd;

			if (!pfd[i].revents || feed(g, i - 1, hello) != 1)
				continue;
			fd = take(g, i - 1);
			if (fd >= 0)
				return fd;
		}
		if (pfd[0].revents && accept_all(g)) {
			snprintf(err, len, "accept: %s", strerror(errno));
			return -1;
		}
	}
}

void greeter_free(struct greeter *g)
{
	int i;

	for (i = 0; i < g->n; i++)
		close(g->peer[i].fd);
	g->n = 0;
	free(g->peer);
	g->peer = NULL;
}
