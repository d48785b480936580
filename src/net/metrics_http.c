#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "core/common.h"
#include "net/metrics_http.h"

#define CONTENT_TYPE \
	"application/openmetrics-text; version=1.0.0; charset=utf-8"

/*
 * A peer that connects and says nothing holds its place for the
 * timeout (10 s): one address may hold a few, so that idle peers from
 * one host cannot take every place from the scraper on another.
 */
#define CONNECTIONS 64u
#define CONNECTIONS_PER_ADDRESS 4u

struct metrics_http {
	struct MHD_Daemon *d;
	int fd;
	void (*render)(void *arg, FILE *f);
	void *arg;
};

int metrics_http_parse(const char *where, struct addr *a, char *err,
		       size_t len)
{
	char host[256], *colon, *end;
	long port;

	if (strlen(where) >= sizeof(host))
		goto bad;
	strcpy(host, where);
	colon = strrchr(host, ':');
	if (!colon || colon == host)
		goto bad;
	*colon = '\0';
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	if (errno || *end || end == colon + 1 || port < 1 || port > 65535)
		goto bad;
	if (host[0] == '[') {
		if (colon[-1] != ']')
			goto bad;
		colon[-1] = '\0';
		memmove(host, host + 1, strlen(host));
	}
	return net_resolve(host, (int)port, AF_UNSPEC, a, err, len);
bad:
	snprintf(err, len, "'%.200s' is not ADDR:PORT ([ADDR]:PORT for "
		 "IPv6, PORT 1-65535)", where);
	return -1;
}

static int listen_on(const char *where, char *err, size_t len)
{
	struct addr a;
	int fd, on = 1;

	if (metrics_http_parse(where, &a, err, len))
		return -1;
	fd = socket(a.ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 &&
	    (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) ||
	     bind(fd, (struct sockaddr *)&a.ss, a.len) || listen(fd, 64))) {
		close(fd);
		fd = -1;
	}
	if (fd < 0)
		snprintf(err, len, "--listen %.200s: %s", where,
			 strerror(errno));
	return fd;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int status,
			     char *body, size_t n)
{
	struct MHD_Response *r;
	enum MHD_Result ok;

	r = MHD_create_response_from_buffer(n, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	if (status == MHD_HTTP_OK)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
					CONTENT_TYPE);
	ok = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ok;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
				  const char *url, const char *method,
				  const char *version, const char *data,
				  size_t *data_len, void **state)
{
	struct metrics_http *h = cls;
	size_t n = 0;
	char *body = NULL;
	FILE *f;

	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED,
			     xstrdup("GET /metrics\n"), 13);
	if (strcmp(url, "/metrics"))
		return reply(c, MHD_HTTP_NOT_FOUND,
			     xstrdup("GET /metrics\n"), 13);
	f = open_memstream(&body, &n);
	if (!f)
		return MHD_NO;
	h->render(h->arg, f);
	if (fclose(f)) {
		free(body);
		return MHD_NO;
	}
	return reply(c, MHD_HTTP_OK, body, n);
}

struct metrics_http *metrics_http_open(const char *where,
				       void (*render)(void *arg, FILE *f),
				       void *arg, char *err, size_t len)
{
	struct metrics_http *h = xcalloc(1, sizeof(*h));

	h->render = render;
	h->arg = arg;
	h->fd = listen_on(where, err, len);
	if (h->fd < 0) {
		free(h);
		return NULL;
	}
	/* No thread: metrics_http_serve() runs it from observe's loop. */
	h->d = MHD_start_daemon(MHD_NO_FLAG, 0, NULL, NULL,
				on_request, h,
				MHD_OPTION_LISTEN_SOCKET, h->fd,
				MHD_OPTION_CONNECTION_TIMEOUT, 10u,
				MHD_OPTION_CONNECTION_LIMIT, CONNECTIONS,
				MHD_OPTION_PER_IP_CONNECTION_LIMIT,
				CONNECTIONS_PER_ADDRESS,
				MHD_OPTION_END);
	if (!h->d) {
		snprintf(err, len, "--listen %.200s: the HTTP server did not "
			 "start", where);
		close(h->fd);
		free(h);
		return NULL;
	}
	return h;
}

void metrics_http_serve(struct metrics_http *h)
{
	MHD_run(h->d);
}

int metrics_http_fd(const struct metrics_http *h)
{
	return h->fd;
}

void metrics_http_close(struct metrics_http *h)
{
	if (!h)
		return;
	/* It closes the listening socket it was given. */
	MHD_stop_daemon(h->d);
	free(h);
}
