/*
 * The option table as text for people: the man page (roff) and
 * --help, every line from the table's usage strings.
 */
#include <stdio.h>
#include <string.h>

#include "core/common.h"
#include "config/options.h"
#include "config/options_def.h"
#include "stages.h"
#include "version.h"

/* Text for roff: backslashes, minus signs and leading dots escaped. */
static void roff(FILE *f, const char *s)
{
	if (*s == '.' || *s == '\'')
		fputs("\\&", f);
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\e", f);
		else if (*s == '-')
			fputs("\\-", f);
		else
			fputc(*s, f);
	}
}

/* "tcp_rr, tcp_crr" for a mask: the workloads that take it. */
static void man_workloads(FILE *f, unsigned int mask)
{
	unsigned int bit;
	int first = 1;

	for (bit = 1; bit <= W_OBSERVE; bit <<= 1)
		if ((mask & bit) && options_workload_name(bit)) {
			fprintf(f, "%s", first ? "" : ", ");
			roff(f, options_workload_name(bit));
			first = 0;
		}
}

/*
 * One entry of an option's: what it does, its default, and unless
 * every workload takes it (the OPTIONS section says so once), which do.
 */
static void man_variant(FILE *f, const struct opt_def *d)
{
	if ((d->mask & W_ALL) != W_ALL) {
		fputs("\\fI", f);
		man_workloads(f, d->mask);
		fputs(":\\fR ", f);
	}
	roff(f, d->usage);
	if (d->defval) {
		fputs(" [default: ", f);
		roff(f, d->defval);
		fputc(']', f);
	}
	if ((d->mask & W_EVERY) == W_EVERY)
		fputs(" (observe too)", f);
	fputs(".\n", f);
}

/* defs[i] and the later entries of its name (-B's per workload) as one. */
static void man_option(FILE *f, const struct opt_def *defs, size_t n,
		       size_t i)
{
	const struct opt_def *d = &defs[i];
	char longname[40];
	size_t j;

	opt_dashed(longname, sizeof(longname), d->name);
	fputs(".TP\n", f);
	if (d->shortopt)
		fprintf(f, "\\fB\\-%c\\fR, ", d->shortopt);
	fputs("\\fB\\-\\-", f);
	roff(f, longname);
	fputs(d->type == T_BOOL ? "\\fR" : d->type == T_OPTSTR ?
	      "\\fR[=\\fIFILE\\fR]" : d->type == T_TRACE ?
	      "\\fR[=\\fIMODE\\fR]" : "\\fR \\fIVALUE\\fR", f);
	fputc('\n', f);
	for (j = i; j < n; j++) {
		if (strcmp(defs[j].name, d->name))
			continue;
		if (j > i)
			fputs(".br\n", f);
		man_variant(f, &defs[j]);
	}
}

/* Every side's stages, from the one list (bpf/stages.h). */
static const struct {
	const char *side, *name, *from, *to;
} man_stage[] = {
#define X(side, name, from, to) { #side, #name, #from, #to },
	NS_STAGES(X)
#undef X
};

static const struct {
	const char *side, *says;
} man_side[] = {
	{ "CLIENT", "tcp_rr client" }, { "SERVER", "tcp_rr server" },
	{ "CLIENT_CRR", "tcp_crr client" }, { "SERVER_CRR", "tcp_crr server" },
	{ "CLIENT_UDP", "udp_rr client" }, { "SERVER_UDP", "udp_rr server" },
	{ "SERVER_OBS", "observe (a server netstage did not start)" },
};

static void man_stages(FILE *f)
{
	size_t s, i;
	int first;

	fputs(".SH STAGES\nWith \\fB\\-\\-trace\\fR each transaction is "
	      "cut at boundaries (kernel events and the program's own "
	      "clock reads) into stages that add up to its latency; "
	      "each stage runs from one boundary to the next. The "
	      "project's docs/stages.md says what each boundary is and "
	      "what moves each stage.\n", f);
	for (s = 0; s < ARRAY_SIZE(man_side); s++) {
		fprintf(f, ".TP\n\\fB%s\\fR\n", man_side[s].says);
		first = 1;
		for (i = 0; i < ARRAY_SIZE(man_stage); i++) {
			if (strcmp(man_stage[i].side, man_side[s].side))
				continue;
			fputs(first ? "" : ", ", f);
			roff(f, man_stage[i].name);
			fputs(" (", f);
			roff(f, man_stage[i].from);
			fputs(" to ", f);
			roff(f, man_stage[i].to);
			fputc(')', f);
			first = 0;
		}
		fputs(".\n", f);
	}
}

static void man_output(FILE *f)
{
	fputs(".SH OUTPUT\n"
	      "Results go to standard output: a summary on a terminal, else "
	      "key=value lines, or CSV or JSON (\\fB\\-\\-output\\-format\\fR). "
	      "Under \\fB\\-\\-local\\fR the prefixes \\fBclient.\\fR, "
	      "\\fBserver.\\fR and \\fBwaterfall.\\fR (the joined "
	      "waterfall) say whose a key is. A key's unit is in its name: "
	      "_us microseconds, _ns nanoseconds, _ms milliseconds, _Mbps "
	      "10^6 bits a second, throughput transactions a second, "
	      "time_start and time_end seconds since the epoch.\n"
	      ".TP\n\\fB\\-\\-json\\fR \\fIFILE\\fR\n"
	      "The options and results as one JSON document, latencies in "
	      "us, each histogram's buckets with it; its JSON Schema is "
	      "installed as share/netstage/netstage.schema.json under the "
	      "prefix (docs/netstage.schema.json in the source).\n"
	      ".TP\n\\fB\\-A\\fR[\\fIFILE\\fR]\n"
	      "samples.csv: a row per flow and interval; time is "
	      "CLOCK_MONOTONIC seconds, latencies and stage means are "
	      "seconds.\n"
	      ".TP\n\\fB\\-\\-trace\\-records\\fR \\fIFILE\\fR\n"
	      "A row per kept traced transaction: its boundaries in "
	      "CLOCK_MONOTONIC nanoseconds, its stages in nanoseconds.\n"
	      ".TP\n\\fB\\-\\-report\\fR, \\fB\\-\\-perfetto\\fR \\fIFILE\\fR\n"
	      "One HTML page of the traced run; a trace for ui.perfetto.dev "
	      "(its slices in us).\n"
	      ".PP\nUnder \\fB\\-\\-local\\fR the server's samples and "
	      "records go to the same name with .server before the "
	      "extension (tx.csv, tx.server.csv).\n", f);
}

/* An entry of a name printed before: man_option() printed it there. */
static int seen_before(const struct opt_def *defs, size_t i)
{
	size_t j;

	for (j = 0; j < i; j++)
		if (!strcmp(defs[j].name, defs[i].name))
			return 1;
	return 0;
}

void options_man(FILE *f)
{
	size_t i, ndefs;
	const struct opt_def *defs = options_defs(&ndefs);

	fprintf(f, ".TH NETSTAGE 1 \"\" \"netstage %s\" \"User Commands\"\n",
		NETSTAGE_VERSION);
	fputs(".SH NAME\nnetstage \\- where the time of a request goes: a "
	      "network micro\\-benchmark that times each transaction "
	      "through the kernel\n"
	      ".SH SYNOPSIS\n.B netstage\n.I workload\n[\\fIoptions\\fR]"
	      "\n.br\n.B netstage observe \\-\\-port\n.I PORT\n"
	      "[\\fIoptions\\fR]\n.br\n.B netstage join\n"
	      ".I CLIENT.csv HOP.csv ...\n.br\n"
	      ".B netstage merge\n.I RESULT.json RESULT.json ...\n.br\n"
	      ".B netstage compare\n.I A.json B.json\n|\n"
	      ".I A.json ... \\fBvs\\fP B.json ...\n.br\n"
	      ".BR tcp_rr \" | \" tcp_crr \" | \" udp_rr \" | \" tcp_stream "
	      "\" | \" udp_stream\n[\\fIoptions\\fR]\n"
	      ".SH DESCRIPTION\nA multi\\-threaded epoll client and server "
	      "generate request/response and bulk traffic and report "
	      "throughput, latency percentiles and CPU use, as neper and "
	      "netperf do. With \\fB\\-\\-trace\\fR, eBPF programs time "
	      "every tcp_rr, tcp_crr and udp_rr transaction at each kernel "
	      "stage; under \\fB\\-\\-local\\fR one waterfall nests the "
	      "server's stages inside the client's time on the wire.\n"
	      ".PP\nOn a terminal the results are a summary; piped, they are "
	      "key=value lines (\\fB\\-\\-output\\-format\\fR).\n"
	      ".SH OPTIONS\n"
	      "Every workload takes an option unless it names those that "
	      "do; \\fBnetstage observe\\fR takes those that name it or say "
	      "\\(lqobserve too\\(rq.\n", f);
	for (i = 0; i < ndefs; i++)
		if (!seen_before(defs, i))
			man_option(f, defs, ndefs, i);
	man_output(f);
	man_stages(f);
	fputs(".SH EXIT STATUS\n0: the test ran; 1: it failed at run time; "
	      "2: bad usage, said in one line.\n"
	      ".SH ENVIRONMENT\n"
	      ".TP\nSUDO_UID, SUDO_GID, SUDO_USER\n"
	      "Set by sudo(8): a netstage run as root by sudo becomes this "
	      "user and group, with the user's groups, once it has kept the "
	      "capabilities it needs.\n"
	      ".SH SECURITY\n"
	      "Only loading BPF needs root (CAP_BPF, CAP_PERFMON). A "
	      "privileged netstage keeps only the capabilities its options "
	      "need from start-up, sets no_new_privs, and drops those of "
	      "loading once its programs are loaded; a helper process keeps "
	      "CAP_SYS_ADMIN alone, for kernel.bpf_stats. The project's "
	      "docs/usage.md, \\(lqPrivileges\\(rq, says what runs with which "
	      "rights.\n"
	      ".SH EXAMPLES\n.nf\nnetstage tcp_rr \\-\\-local \\-l 5 "
	      "\\-\\-trace \\-\\-report run.html\n"
	      "tcp_rr \\-F 10 \\-T 2                  # server\n"
	      "tcp_rr \\-c \\-H server \\-F 10 \\-l 30   # client\n.fi\n"
	      ".SH SEE ALSO\nnetperf(1), iperf3(1), sockperf(1), bpftrace(8)\n",
	      f);
}

void options_usage(unsigned int wl, const char *name)
{
	size_t i, ndefs;
	const struct opt_def *defs = options_defs(&ndefs);

	printf("usage: %s [options]\n\n", name);
	for (i = 0; i < ndefs; i++) {
		const struct opt_def *d = &defs[i];
		char longname[40], left[64];

		if (!(d->mask & wl))
			continue;
		opt_dashed(longname, sizeof(longname), d->name);
		snprintf(left, sizeof(left), "%c%c%s --%s%s",
			 d->shortopt ? '-' : ' ', d->shortopt ? d->shortopt : ' ',
			 d->shortopt ? "," : " ", longname,
			 d->type == T_BOOL ? "" :
			 d->type == T_OPTSTR ? "[=FILE]" :
			 d->type == T_TRACE ? "[=MODE]" : " VALUE");
		printf("  %-32s %s%s%s%s\n", left, d->usage,
		       d->defval ? " [" : "", d->defval ? d->defval : "",
		       d->defval ? "]" : "");
	}
}
