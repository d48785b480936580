/*
 * The command line into struct options: each option's value from its
 * text (numbers with nothing before or after them, ranges, durations,
 * percentile lists, the named modes), the defaults, and getopt_long
 * over the table.
 */
#include <ctype.h>
#include <getopt.h>
#include <stdarg.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "config/options.h"
#include "config/options_def.h"

/* A decimal number, nothing before or after it (strtod takes hex too). */
static int parse_decimal(const char *s, double *out)
{
	char *end;

	if (!isdigit((unsigned char)*s) && *s != '.')
		return -1;
	if (strpbrk(s, "xXpP"))
		return -1;
	errno = 0;
	*out = strtod(s, &end);
	return errno || end == s || *end || !isfinite(*out) ? -1 : 0;
}

int percentiles_parse(struct percentiles *p, const char *s)
{
	char *copy = xstrdup(s), *rest = copy, *tok;
	int rc = 0;
	double v;

	p->n = 0;
	/* strsep, not strtok: an empty item ("50,,99", ",") is an error. */
	while ((tok = strsep(&rest, ",")) != NULL) {
		if (parse_decimal(tok, &v) || v > 100 ||
		    p->n == MAX_PERCENTILES) {
			rc = -1;
			break;
		}
		p->p[p->n++] = v;
	}
	free(copy);
	return rc;
}

/* A decimal integer: no octal, no hex, no sign but '-', no overflow. */
static int parse_ll(const char *s, long long *out)
{
	char *end;

	if (!isdigit((unsigned char)*s) &&
	    !(*s == '-' && isdigit((unsigned char)s[1])))
		return -1;
	errno = 0;
	*out = strtoll(s, &end, 10);
	return (errno || *end) ? -1 : 0;
}

/* "A,B": two decimal integers in [lo, hi]. */
static int parse_pair(const char *s, long long lo, long long hi,
		      long long *a, long long *b)
{
	char *copy = xstrdup(s), *comma = strchr(copy, ',');
	int rc = -1;

	if (comma) {
		*comma = '\0';
		rc = parse_ll(copy, a) || parse_ll(comma + 1, b) ||
		     *a < lo || *a > hi || *b < lo || *b > hi ? -1 : 0;
	}
	free(copy);
	return rc;
}

static int parse_delay(const char *s, uint64_t *out)
{
	static const struct { const char *sfx; uint64_t mul; } units[] = {
		{ "", 1 }, { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 },
		{ "s", NSEC_PER_SEC },
	};
	char *end;
	double v;
	size_t i;

	if ((!isdigit((unsigned char)*s) && *s != '.') || strpbrk(s, "xXpP"))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v))
		return -1;
	for (i = 0; i < ARRAY_SIZE(units); i++) {
		if (!strcmp(end, units[i].sfx)) {
			if (v * units[i].mul > 1e15)
				return -1;
			*out = (uint64_t)(v * units[i].mul);
			return 0;
		}
	}
	return -1;
}

static int io_mode_of(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(opt_io_modes); i++)
		if (!strcmp(name, opt_io_modes[i]))
			return i;
	return -1;
}

int opt_set_value(struct options *o, const struct opt_def *d,
		  const char *arg, char *err, size_t len)
{
	long long ll;
	double v;

	switch (d->type) {
	case T_BOOL:
		*FIELD(o, d, int) = 1;
		return 0;
	case T_INT:
		if (parse_ll(arg, &ll))
			return opt_fail(err, len, d, "'%s' is not an integer", arg);
		if (ll < d->min || ll > d->max)
			return opt_fail(err, len, d, "%lld is out of range [%lld, %lld]",
				    ll, d->min, d->max);
		*FIELD(o, d, int) = (int)ll;
		return 0;
	case T_U64:
		if (parse_ll(arg, &ll) || ll < 0)
			return opt_fail(err, len, d,
				    "'%s' is not a non-negative integer", arg);
		*FIELD(o, d, uint64_t) = (uint64_t)ll;
		return 0;
	case T_DOUBLE:
		if (parse_decimal(arg, &v) || v < 0.001 || v > 3600)
			return opt_fail(err, len, d,
				    "'%s' is not a number in [0.001, 3600]",
				    arg);
		*FIELD(o, d, double) = v;
		return 0;
	case T_STR:
	case T_OPTSTR:
		if (!arg && d->type == T_OPTSTR)
			arg = d->defval;
		if (!*arg)
			return opt_fail(err, len, d, "empty value");
		free(*FIELD(o, d, char *));
		*FIELD(o, d, char *) = xstrdup(arg);
		return 0;
	case T_PCT:
		if (percentiles_parse(FIELD(o, d, struct percentiles), arg))
			return opt_fail(err, len, d,
				    "'%s' is not a list of up to %d numbers in [0, 100]",
				    arg, MAX_PERCENTILES);
		return 0;
	case T_TRIGGER:
		if (strcmp(arg, "level") && strcmp(arg, "edge"))
			return opt_fail(err, len, d,
				    "'%s' is neither 'level' nor 'edge'", arg);
		*FIELD(o, d, int) = !strcmp(arg, "edge");
		return 0;
	case T_IOMODE:
		ll = io_mode_of(arg);
		if (ll < 0)
			return opt_fail(err, len, d,
				    "'%s' is none of 'epoll', 'blocking', 'busy', 'spin'",
				    arg);
		*FIELD(o, d, enum io_mode) = ll;
		return 0;
	case T_TRACE:
		if (arg && strcmp(arg, "records") && strcmp(arg, "hist"))
			return opt_fail(err, len, d,
				    "'%s' is neither 'records' nor 'hist'", arg);
		*FIELD(o, d, int) = arg && !strcmp(arg, "hist") ? 2 : 1;
		return 0;
	case T_ITER: {
		long long a, b;

		/*
		 * Either order: netperf's -i is max,min, and a pair means
		 * one thing only, the least of it the minimum.
		 */
		if (parse_pair(arg, 1, 30, &a, &b))
			return opt_fail(err, len, d,
				    "'%s' is not MIN,MAX (or netperf's MAX,MIN) "
				    "of 1 to 30", arg);
		o->iter_min = (int)(a < b ? a : b);
		o->iter_max = (int)(a < b ? b : a);
		return 0;
	}
	case T_CONF: {
		const char *comma = strchr(arg, ',');
		long long lvl = 0;
		char lv[8] = "";
		double wd = 0;

		if (comma && comma - arg < (long)sizeof(lv))
			memcpy(lv, arg, comma - arg);
		if (!comma || parse_ll(lv, &lvl) ||
		    parse_decimal(comma + 1, &wd) ||
		    (lvl != 95 && lvl != 99) || !(wd > 0) || wd > 100)
			return opt_fail(err, len, d,
				    "'%s' is not LEVEL,WIDTH with LEVEL 95 or 99 and 0 < WIDTH <= 100",
				    arg);
		o->conf_level = (int)lvl;
		o->conf_width = wd;
		return 0;
	}
	case T_RATE:
		if (parse_decimal(arg, &v) || v > 1e9)
			return opt_fail(err, len, d,
				    "'%s' is not a rate in [0, 1e9] per second",
				    arg);
		*FIELD(o, d, double) = v;
		return 0;
	case T_DELAY:
		if (parse_delay(arg, FIELD(o, d, uint64_t)))
			return opt_fail(err, len, d,
				    "'%s' is not a duration (e.g. 500, 20us, 1ms)",
				    arg);
		return 0;
	}
	return opt_fail(err, len, d, "internal: unknown type");
}

int opt_fail(char *err, size_t len, const struct opt_def *d,
	     const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (d) {
		char name[40];

		opt_dashed(name, sizeof(name), d->name);
		snprintf(err, len, "option --%s: %s", name, msg);
	}
	else
		snprintf(err, len, "%s", msg);
	return -1;
}

static void set_defaults(struct options *o, unsigned int wl)
{
	size_t i, ndefs;
	const struct opt_def *defs = options_defs(&ndefs);
	char err[256];

	memset(o, 0, sizeof(*o));
	o->workload = wl;
	for (i = 0; i < ndefs; i++) {
		const struct opt_def *d = &defs[i];

		if ((d->mask & wl) && d->defval && d->type != T_OPTSTR &&
		    opt_set_value(o, d, d->defval, err, sizeof(err)))
			abort();	/* a bad table entry is a bug */
	}
}

/* getopt_long wants a table; ours has both spellings of each name. */
struct getopt_tables {
	struct option longopts[2 * OPT_MAX + 1];
	char names[OPT_MAX][40];
	char shortopts[3 * OPT_MAX + 2];
};

static int has_arg(const struct opt_def *d)
{
	if (d->type == T_BOOL)
		return no_argument;
	return d->type == T_OPTSTR || d->type == T_TRACE ? optional_argument
							 : required_argument;
}

static void build_tables(struct getopt_tables *t, unsigned int wl)
{
	size_t i, nl = 0, ns = 0, ndefs;
	const struct opt_def *defs = options_defs(&ndefs);

	t->shortopts[ns++] = ':';	/* report missing arguments as ':' */
	for (i = 0; i < ndefs; i++) {
		const struct opt_def *d = &defs[i];
		int ha = has_arg(d);

		if (!(d->mask & wl))
			continue;
		t->longopts[nl++] = (struct option){ d->name, ha, NULL, 256 + i };
		opt_dashed(t->names[i], sizeof(t->names[i]), d->name);
		if (strcmp(t->names[i], d->name))
			t->longopts[nl++] = (struct option){ t->names[i], ha,
							     NULL, 256 + i };
		if (d->shortopt) {
			t->shortopts[ns++] = d->shortopt;
			if (ha != no_argument)
				t->shortopts[ns++] = ':';
			if (ha == optional_argument)
				t->shortopts[ns++] = ':';
		}
	}
	t->shortopts[ns] = '\0';
	memset(&t->longopts[nl], 0, sizeof(t->longopts[nl]));
}

static const struct opt_def *by_short(int c, unsigned int wl)
{
	size_t i, ndefs;
	const struct opt_def *defs = options_defs(&ndefs);

	for (i = 0; i < ndefs; i++)
		if (defs[i].shortopt == c && (defs[i].mask & wl))
			return &defs[i];
	return NULL;
}

/* The option named name (n bytes, as typed after "--"), any workload's. */
static const struct opt_def *by_long(const char *name, size_t n)
{
	size_t i, ndefs;
	const struct opt_def *defs = options_defs(&ndefs);
	char dashed[64];

	for (i = 0; i < ndefs; i++) {
		opt_dashed(dashed, sizeof(dashed), defs[i].name);
		if ((strlen(defs[i].name) == n &&
		     !strncmp(defs[i].name, name, n)) ||
		    (strlen(dashed) == n && !strncmp(dashed, name, n)))
			return &defs[i];
	}
	return NULL;
}

/* Edits (a letter changed, added or dropped) from a's n bytes to b. */
static size_t edits(const char *a, size_t n, const char *b)
{
	size_t m = strlen(b), row[64], i, j, prev, cur;

	if (n >= 64 || m >= 64)
		return SIZE_MAX;
	for (j = 0; j <= m; j++)
		row[j] = j;
	for (i = 1; i <= n; i++) {
		prev = row[0];
		row[0] = i;
		for (j = 1; j <= m; j++) {
			cur = row[j];
			row[j] = prev + (a[i - 1] != b[j - 1]);
			if (row[j - 1] + 1 < row[j])
				row[j] = row[j - 1] + 1;
			if (cur + 1 < row[j])
				row[j] = cur + 1;
			prev = cur;
		}
	}
	return row[m];
}

/* This workload's option nearest to the mistyped name: 2 edits at most. */
static const char *nearest(const char *name, size_t n, unsigned int wl,
			   char *buf, size_t len)
{
	size_t i, ndefs, best = 3, e;
	const struct opt_def *defs = options_defs(&ndefs);
	const char *found = NULL;

	for (i = 0; i < ndefs; i++) {
		if (!(defs[i].mask & wl))
			continue;
		opt_dashed(buf, len, defs[i].name);
		e = edits(name, n, buf);
		if (e < best) {
			best = e;
			found = defs[i].name;
		}
	}
	if (!found)
		return NULL;
	opt_dashed(buf, len, found);
	return buf;
}

/* "tcp_rr, tcp_crr and udp_rr": the workloads of mask. */
static void workloads_of(unsigned int mask, char *buf, size_t len)
{
	unsigned int bit, left = mask & W_ALL;
	size_t at = 0;

	buf[0] = '\0';
	for (bit = 1; left && at < len; bit <<= 1) {
		if (!(left & bit))
			continue;
		left &= ~bit;
		at += snprintf(buf + at, len - at, "%s%s",
			       at ? (left ? ", " : " and ") : "",
			       options_workload_name(bit));
	}
}

/*
 * An option getopt did not take: one of another workload's (say whose),
 * a near miss of this one's (say which), or unknown.
 */
static int unknown_long(const char *arg, unsigned int wl, char *err,
			size_t len)
{
	/* The name alone: "--bogus=5" is about --bogus. */
	int n = (int)strcspn(arg, "=");
	const struct opt_def *d = by_long(arg + 2, n - 2);
	char names[96];

	if (d && (d->mask & W_ALL) && options_workload_name(wl)) {
		int one = __builtin_popcount(d->mask & W_ALL) == 1;

		workloads_of(d->mask, names, sizeof(names));
		return opt_fail(err, len, NULL, "unknown option '%.*s' for %s "
				"(%s%s %s it)", n, arg,
				options_workload_name(wl), one ? "only " : "",
				names, one ? "takes" : "take");
	}
	if (!d && nearest(arg + 2, n - 2, wl, names, sizeof(names)))
		return opt_fail(err, len, NULL, "unknown option '%.*s' (did "
				"you mean '--%s'?)", n, arg, names);
	return opt_fail(err, len, NULL, "unknown option '%.*s'", n, arg);
}

static int bad_option(int c, char **argv, unsigned int wl, char *err,
		      size_t len)
{
	const char *arg = argv[optind - 1];

	if (c == ':')
		return opt_fail(err, len, NULL, "option '%s' needs a value", arg);
	if (optopt && !(arg[0] == '-' && arg[1] == '-'))
		return opt_fail(err, len, NULL, "unknown option '-%c'", optopt);
	return unknown_long(arg, wl, err, len);
}

/*
 * A word left over. After an option whose value is optional (-A, --trace)
 * it was most likely meant as that value, which getopt takes only
 * joined to it: say how.
 */
static int unexpected(char **argv, unsigned int wl, char *err, size_t len)
{
	const char *prev = optind > 1 ? argv[optind - 1] : "";
	const struct opt_def *d = NULL;
	char name[64], joined[96];

	if (prev[0] == '-' && prev[1] == '-')
		d = by_long(prev + 2, strlen(prev + 2));
	else if (prev[0] == '-' && prev[1] && !prev[2])
		d = by_short(prev[1], wl);
	if (d && has_arg(d) == optional_argument) {
		opt_dashed(name, sizeof(name), d->name);
		snprintf(joined, sizeof(joined), " or -%c%s", d->shortopt,
			 argv[optind]);
		return opt_fail(err, len, NULL, "unexpected argument '%s' "
				"(--%s takes its value joined: --%s=%s%s)",
				argv[optind], name, name, argv[optind],
				d->shortopt ? joined : "");
	}
	return opt_fail(err, len, NULL, "unexpected argument '%s'",
			argv[optind]);
}

int options_parse(struct options *o, unsigned int wl, int argc, char **argv,
		  char *err, size_t len)
{
	struct getopt_tables *t = xcalloc(1, sizeof(*t));
	size_t ndefs;
	const struct opt_def *defs = options_defs(&ndefs);
	int c, rc = 0;

	set_defaults(o, wl);
	build_tables(t, wl);
	opterr = 0;
	/*
	 * 0, not 1: glibc then forgets where it was inside a cluster of
	 * short options ("-xyz") of an earlier parse that stopped there,
	 * which would point into that parse's (freed) arguments.
	 */
	optind = 0;
	while ((c = getopt_long(argc, argv, t->shortopts, t->longopts,
				NULL)) != -1) {
		const struct opt_def *d;

		if (c == '?' || c == ':') {
			rc = bad_option(c, argv, wl, err, len);
			break;
		}
		d = c >= 256 ? &defs[c - 256] : by_short(c, wl);
		o->given[(d - defs) / 64] |= 1ULL << ((d - defs) % 64);
		rc = opt_set_value(o, d, optarg, err, len);
		if (rc)
			break;
	}
	if (!rc && optind < argc)
		rc = unexpected(argv, wl, err, len);
	free(t);
	return rc;
}
