/*
 * Output files (--json, -A, --trace-records, join's --records): opened
 * before the test, so a path that cannot be written fails first, and
 * never left half-written.
 *
 * A regular file (or a new one) is written under a temporary name made
 * with O_EXCL and a random suffix beside it, and renamed onto the path
 * when complete. Anything else is written in place, as a user who names
 * it expects: a symlink is written through to its target, made if it
 * is not there yet, as a shell's `>` does (a rename onto the link
 * would replace it), a device, fifo or /dev/stdout takes the bytes
 * as they come, and its write errors (ENOSPC from /dev/full) are
 * reported. A directory is refused. Temporary files are removed on
 * every exit netstage controls: failure, signals, --suicide-length,
 * and exit() from a script (os.exit).
 */
#ifndef NETSTAGE_OUTFILE_H
#define NETSTAGE_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

struct out_file {
	char *path;		/* as the user gave it, for messages */
	char *dest;		/* what the temporary is renamed onto */
	char *tmp;		/* NULL: written in place */
	FILE *f;
};

/* 0, or -1 with err saying which path and why. */
int out_open(struct out_file *o, const char *path, char *err, size_t len);
/*
 * Could out_open() write path? Without opening what is written in place
 * (a fifo's reader would see its end): 0, or -1 with err.
 */
int out_check(const char *path, char *err, size_t len);
/* Flush, check, and rename into place: 0, or -1 with err. */
int out_commit(struct out_file *o, char *err, size_t len);
/* Give up: the temporary file goes; a file written in place stays. */
void out_abort(struct out_file *o);
/*
 * A file of this process's own (path stays valid until untracked) that
 * out_remove_temps() and exit() remove with the temporary files.
 */
void out_track(char *path);
void out_untrack(const char *path);
/*
 * Remove this process's temporary files now: async-signal-safe, for a
 * handler that is about to _exit().
 */
void out_remove_temps(void);

#endif
