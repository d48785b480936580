/*
 * Files netstage reads whole (--request-file, --auth-key), bounded in
 * size and in time: a regular file, or a pipe or fifo (a shell's
 * <(...)), whose writer must give it all within INFILE_WAIT_MS. A fifo
 * nobody has open for writing reads as empty rather than waiting for
 * one; a directory is refused.
 */
#ifndef NETSTAGE_INFILE_H
#define NETSTAGE_INFILE_H

#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>

#define INFILE_WAIT_MS 5000

/*
 * Up to max bytes of path into buf (room for max + 1: *n = max + 1
 * says it holds more), its mode in *mode. 0, or -1 with errno
 * (ETIMEDOUT: a writer silent for INFILE_WAIT_MS).
 */
int infile_read(const char *path, void *buf, size_t max, size_t *n,
		mode_t *mode);
/*
 * fopen(path, "r") for a file read as it comes (join's records), with
 * no wait at open() for a fifo's writer: without one, it reads empty.
 */
FILE *infile_open(const char *path);

#endif
