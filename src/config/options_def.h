/*
 * Inside the options module (options.c the table and the dump,
 * options_parse.c the command line, options_doc.c the man page):
 * the table's row type and what the three files share. Not for the
 * rest of netstage, which reads options.h.
 */
#ifndef NETSTAGE_OPTIONS_DEF_H
#define NETSTAGE_OPTIONS_DEF_H

#include <stddef.h>

struct options;

enum opt_type {
	T_BOOL,		/* no argument: sets 1 */
	T_INT,		/* int within [min, max] */
	T_U64,		/* unsigned 64-bit */
	T_DOUBLE,	/* > 0 */
	T_STR,
	T_OPTSTR,	/* optional argument; bare flag takes defval */
	T_PCT,		/* percentile list */
	T_TRIGGER,	/* level|edge into an int */
	T_IOMODE,
	T_DELAY,	/* duration: ns, or with ns/us/ms/s suffix */
	T_TRACE,	/* optional argument: records */
	T_RATE,		/* double >= 0 */
	T_ITER,		/* MIN,MAX into two ints */
	T_CONF,		/* LEVEL,WIDTH into an int and a double */
};

struct opt_def {
	const char *name;
	char shortopt;
	enum opt_type type;
	size_t off;
	unsigned int mask;	/* the workloads it applies to, OPT_ flags */
	const char *defval;	/* parsed like user input at start-up */
	long long min, max;
	const char *usage;
};

/*
 * Not a workload: a traced run's results print the value in effect
 * (trace/summary.h), so the key=value options leave it out then: one
 * line, not two. JSON keeps both, each in its own object.
 */
#define OPT_TRACED_RESULT (1u << 31)

/* Entries the table may have: the getopt tables and options.given. */
#define OPT_MAX 128

#define FIELD(o, d, type) ((type *)((char *)(o) + (d)->off))

/* The table, in its order: every workload's options. */
const struct opt_def *options_defs(size_t *n);
/* "trace_records" as the command line spells it: "trace-records". */
void opt_dashed(char *dst, size_t len, const char *name);
/* "option --NAME: " and the message in err; returns -1. */
int opt_fail(char *err, size_t len, const struct opt_def *d,
	     const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* arg, as typed, into d's field of o: 0, or -1 with err (opt_fail). */
int opt_set_value(struct options *o, const struct opt_def *d,
		  const char *arg, char *err, size_t len);
/* enum io_mode's names (options.c); io_mode_name() reads them. */
extern const char *const opt_io_modes[4];

#endif
