#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/common.h"
#include "core/outfile.h"

/* This process's temporary files, for exits that skip out_abort(). */
#define MAX_TEMPS 32
static char *volatile temps[MAX_TEMPS];
static pid_t temps_pid[MAX_TEMPS];
static int at_exit_set;

void out_remove_temps(void)
{
	pid_t me = getpid();
	int i;

	/* A --local server inherits its parent's list: not its files. */
	for (i = 0; i < MAX_TEMPS; i++)
		if (temps[i] && temps_pid[i] == me)
			unlink(temps[i]);
}

static void remove_at_exit(void)
{
	out_remove_temps();
}

void out_track(char *tmp)
{
	int i;

	if (!at_exit_set)
		at_exit_set = !atexit(remove_at_exit);
	for (i = 0; i < MAX_TEMPS; i++)
		if (!temps[i]) {
			temps_pid[i] = getpid();
			temps[i] = tmp;
			return;
		}
}

void out_untrack(const char *tmp)
{
	int i;

	for (i = 0; i < MAX_TEMPS; i++)
		if (temps[i] == tmp)
			temps[i] = NULL;
}

/*
 * Links into /proc (/dev/stdout, /dev/fd/N) name an open file, not a
 * path: renaming onto what they resolve to would cut it off from the
 * descriptor the user gave.
 */
static int magic_link(const char *path)
{
	char target[PATH_MAX];
	ssize_t n;

	if (!strncmp(path, "/proc/", 6) || !strncmp(path, "/dev/", 5))
		return 1;
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return 0;
	target[n] = '\0';
	return !strncmp(target, "/proc/", 6);
}

static int fail(struct out_file *o, const char *path, const char *why,
		char *err, size_t len)
{
	snprintf(err, len, "cannot write '%s': %s", path, why);
	free(o->path);
	free(o->dest);
	free(o->tmp);
	memset(o, 0, sizeof(*o));
	return -1;
}

/* Not a regular file: write into it as it is. */
static int open_in_place(struct out_file *o, const char *path, char *err,
			 size_t len)
{
	/* A fifo without a reader would block: say so instead. */
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return fail(o, path, errno == ENXIO ? "a fifo with no reader"
						    : strerror(errno),
			    err, len);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	o->f = fdopen(fd, "w");
	if (!o->f) {
		close(fd);
		return fail(o, path, strerror(errno), err, len);
	}
	return 0;
}

/* A regular file, or none yet: a temporary beside it, renamed later. */
static int open_temp(struct out_file *o, const char *path, char *err,
		     size_t len)
{
	size_t n = strlen(o->dest) + 8;
	mode_t mask;
	int fd;

	o->tmp = xcalloc(1, n);
	snprintf(o->tmp, n, "%s.XXXXXX", o->dest);
	/* O_EXCL, a random name: nothing planted there is followed. */
	fd = mkostemp(o->tmp, O_CLOEXEC);
	if (fd < 0)
		return fail(o, path, strerror(errno), err, len);
	mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	o->f = fdopen(fd, "w");
	if (!o->f) {
		close(fd);
		unlink(o->tmp);
		return fail(o, path, strerror(errno), err, len);
	}
	out_track(o->tmp);
	return 0;
}

/* target, read from link path, as a path from where we are. */
static char *beside(const char *path, const char *target)
{
	const char *slash = strrchr(path, '/');
	size_t d = slash ? (size_t)(slash - path + 1) : 0;
	char *p;

	if (target[0] == '/' || !d)
		return xstrdup(target);
	p = xcalloc(1, d + strlen(target) + 1);
	memcpy(p, path, d);
	strcpy(p + d, target);
	return p;
}

/*
 * Where writing through symlink path lands: the last link's target,
 * which need not exist yet (a shell's `>` creates it, and so do we);
 * realpath() would refuse it. NULL: links in a loop.
 */
static char *link_target(const char *path)
{
	char *cur = xstrdup(path), *next, target[PATH_MAX];
	int hops;
	ssize_t n;

	for (hops = 0; hops < 40; hops++) {
		n = readlink(cur, target, sizeof(target) - 1);
		if (n < 0)
			return cur;
		target[n] = '\0';
		next = beside(cur, target);
		free(cur);
		cur = next;
	}
	free(cur);
	return NULL;
}

int out_open(struct out_file *o, const char *path, char *err, size_t len)
{
	int link = 0, exists;
	struct stat st;

	memset(o, 0, sizeof(*o));
	o->path = xstrdup(path);
	if (!lstat(path, &st))
		link = S_ISLNK(st.st_mode);
	else if (errno != ENOENT)
		return fail(o, path, strerror(errno), err, len);
	exists = !stat(path, &st);
	if (!exists && errno != ENOENT)
		return fail(o, path, strerror(errno), err, len);
	if (exists && S_ISDIR(st.st_mode))
		return fail(o, path, "it is a directory", err, len);
	if ((link && magic_link(path)) || (exists && !S_ISREG(st.st_mode)))
		return open_in_place(o, path, err, len);
	/* Through a symlink: the rename goes onto its target. */
	o->dest = link ? link_target(path) : xstrdup(path);
	if (!o->dest)
		return fail(o, path, strerror(ELOOP), err, len);
	return open_temp(o, path, err, len);
}

int out_check(const char *path, char *err, size_t len)
{
	struct out_file o;
	struct stat st;

	if (!stat(path, &st) && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		if (!access(path, W_OK))
			return 0;
		snprintf(err, len, "cannot write '%s': %s", path,
			 strerror(errno));
		return -1;
	}
	if (out_open(&o, path, err, len))
		return -1;
	out_abort(&o);
	return 0;
}

int out_commit(struct out_file *o, char *err, size_t len)
{
	int rc = 0;

	if (!o->f)
		return 0;
	if (ferror(o->f) | fclose(o->f) ||
	    (o->tmp && rename(o->tmp, o->dest))) {
		snprintf(err, len, "cannot write '%s': %s", o->path,
			 strerror(errno));
		if (o->tmp)
			unlink(o->tmp);
		rc = -1;
	}
	if (o->tmp)
		out_untrack(o->tmp);
	o->f = NULL;
	free(o->path);
	free(o->dest);
	free(o->tmp);
	return rc;
}

void out_abort(struct out_file *o)
{
	if (!o->f)
		return;
	fclose(o->f);
	if (o->tmp) {
		unlink(o->tmp);
		out_untrack(o->tmp);
	}
	o->f = NULL;
	free(o->path);
	free(o->dest);
	free(o->tmp);
}
