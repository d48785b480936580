#include <stdarg.h>
#include <string.h>

#include "core/common.h"

static const char *role = "netstage";
static int info_enabled;

void log_set_role(const char *r)
{
	role = r;
}

void log_enable_info(int on)
{
	info_enabled = on;
}

static void vlog(const char *fmt, va_list ap)
{
	char line[1024];

	/* One write per line so lines of two processes never interleave. */
	vsnprintf(line, sizeof(line), fmt, ap);
	fprintf(stderr, "%s: %s\n", role, line);
}

void log_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(fmt, ap);
	va_end(ap);
}

void log_info(const char *fmt, ...)
{
	va_list ap;

	if (!info_enabled)
		return;
	va_start(ap, fmt);
	vlog(fmt, ap);
	va_end(ap);
}

static void *check(void *p)
{
	if (!p) {
		log_err("out of memory");
		abort();
	}
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	return check(calloc(n ? n : 1, size ? size : 1));
}

void *xrealloc(void *p, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return check(NULL);
	return check(realloc(p, (n && size) ? n * size : 1));
}

char *xstrdup(const char *s)
{
	return check(strdup(s));
}

int pretend_enosys(const char *call)
{
	const char *p = getenv("NETSTAGE_PRETEND_ENOSYS");

	return p && strstr(p, call);
}
