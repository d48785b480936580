/*
 * The option table as text for people: the man page (roff) and
 * --help, every line from the table's usage strings.
 */
#include <stdio.h>
#include <string.h>

#include "core/common.h"
#include "config/options.h"
#include "config/options_def.h"
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

static void man_option(FILE *f, const struct opt_def *d)
{
	char longname[40];
	unsigned int bit;
	int first = 1;

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
	roff(f, d->usage);
	if (d->defval) {
		fputs(" [default: ", f);
		roff(f, d->defval);
		fputc(']', f);
	}
	fputs(".\nWorkloads: ", f);
	for (bit = 1; bit <= W_OBSERVE; bit <<= 1)
		if ((d->mask & bit) && options_workload_name(bit)) {
			fprintf(f, "%s", first ? "" : ", ");
			roff(f, options_workload_name(bit));
			first = 0;
		}
	fputs(".\n", f);
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
	      ".SH OPTIONS\n", f);
	for (i = 0; i < ndefs; i++)
		man_option(f, &defs[i]);
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
