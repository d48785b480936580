#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/securebits.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "core/common.h"
#include "sys/privs.h"
#include "stages.h"

/* Capabilities as bits: cap_max_bits() is 41 on 6.18. */
typedef unsigned long long capset_t;
#define BIT(c) (1ULL << (c))

static int active;		/* privs_start() reduced the rights */
static capset_t have;		/* permitted at start: nothing can be added */
static capset_t eff;		/* effective at start */
static capset_t run_caps;	/* kept to the end */
static capset_t load_caps;	/* kept until privs_loaded() */
static int helper = -1;		/* socket to the stats helper */
static pid_t helper_pid, helper_parent;
static pthread_mutex_t helper_mu = PTHREAD_MUTEX_INITIALIZER;

static int has(cap_t c, cap_value_t v, cap_flag_t which)
{
	cap_flag_value_t f = CAP_CLEAR;

	cap_get_flag(c, v, which, &f);
	return f == CAP_SET;
}

/* Permitted and effective: exactly `set`; inheritable and ambient empty. */
static int set_caps(capset_t set)
{
	cap_t c = cap_init();
	cap_value_t v;
	int rc;

	if (!c)
		return -1;
	for (v = 0; v < 64 && v < cap_max_bits(); v++)
		if (set & have & BIT(v)) {
			cap_set_flag(c, CAP_PERMITTED, 1, &v, CAP_SET);
			cap_set_flag(c, CAP_EFFECTIVE, 1, &v, CAP_SET);
		}
	rc = cap_set_proc(c);
	cap_free(c);
	if (!rc && CAP_AMBIENT_SUPPORTED())
		rc = cap_reset_ambient();
	return rc;
}

static void drop_bounding(capset_t keep)
{
	cap_value_t v;

	for (v = 0; v < cap_max_bits(); v++)
		if (v >= 64 || !(keep & BIT(v)))
			cap_drop_bound(v);
}

/*
 * The oldest BPF map of that name loaded on the host, or -1 with errno:
 * walking the maps' ids takes CAP_SYS_ADMIN.
 */
static int oldest_map(const char *name)
{
	__u32 id = 0;
	int fd;

	while (!bpf_map_get_next_id(id, &id)) {
		struct bpf_map_info info = { 0 };
		__u32 len = sizeof(info);

		fd = bpf_map_get_fd_by_id(id);
		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    !strncmp(info.name, name, sizeof(info.name)))
			return fd;
		close(fd);
	}
	if (errno == ENOENT)
		errno = ESRCH;
	return -1;
}

/*
 * What the helper is asked: the stats descriptor, or the shared packet
 * clock's map (that one map: a process that gave up CAP_SYS_ADMIN gets
 * no other process's map by asking).
 */
#define ASK_STATS 1
#define ASK_RX_CLOCK 2

/*
 * The helper: CAP_SYS_ADMIN and nothing else, one request byte in (ASK_*),
 * a descriptor (or an errno byte) out, until the run's processes close
 * their end.
 */
static void helper_main(int sock)
{
	int null = open("/dev/null", O_RDWR);
	char q;

	/* Nobody waits for EOF on a pipe the helper holds. */
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		close(null);
	}
	close_range(STDERR_FILENO + 1, sock - 1, 0);
	close_range(sock + 1, ~0U, 0);
	drop_bounding(BIT(CAP_SYS_ADMIN));
	if (set_caps(BIT(CAP_SYS_ADMIN)) ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		_exit(1);
	prctl(PR_SET_NAME, "netstage-stats");
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	while (recv(sock, &q, 1, 0) == 1) {
		char cbuf[CMSG_SPACE(sizeof(int))] = { 0 }, b;
		struct iovec iov = { &b, 1 };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
		int fd;

		if (q == ASK_RX_CLOCK)
			fd = oldest_map(NS_NAME(NS_RX_CLOCK));
		else
			fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		b = fd < 0 ? (char)errno : 0;
		if (fd >= 0) {
			struct cmsghdr *cm;

			m.msg_control = cbuf;
			m.msg_controllen = sizeof(cbuf);
			cm = CMSG_FIRSTHDR(&m);
			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = SCM_RIGHTS;
			cm->cmsg_len = CMSG_LEN(sizeof(int));
			memcpy(CMSG_DATA(cm), &fd, sizeof(int));
		}
		if (sendmsg(sock, &m, MSG_NOSIGNAL) != 1)
			break;
		if (fd >= 0)
			close(fd);
	}
	_exit(0);
}

/*
 * The process that made the helper ends it and waits for it: left to
 * end when its socket closes, it outlived us, and a container's init
 * that reaps no orphans kept it a zombie. A --local server (a fork)
 * leaves it to its parent.
 */
static void reap_helper(void)
{
	int i;

	if (getpid() != helper_parent || helper_pid <= 0)
		return;
	/*
	 * Its socket closed, it ends by itself, unless a --local server
	 * still holds the other end; SIGKILL may be refused (we run as
	 * the invoking user now). So a second at most.
	 */
	close(helper);
	helper = -1;
	kill(helper_pid, SIGKILL);
	for (i = 0; i < 100 && !waitpid(helper_pid, NULL, WNOHANG); i++)
		usleep(10000);
	helper_pid = 0;
}

static int start_helper(char *err, size_t len)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		snprintf(err, len, "socketpair: %s", strerror(errno));
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(err, len, "fork: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (pid == 0) {
		close(sv[0]);
		helper_main(sv[1]);
	}
	close(sv[1]);
	helper = sv[0];
	helper_pid = pid;
	helper_parent = getpid();
	atexit(reap_helper);
	return 0;
}

/* The helper's answer to request q: a descriptor, or -1 with errno. */
static int ask_helper(char q)
{
	char b = 0, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &b, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int fd = -1;

	pthread_mutex_lock(&helper_mu);
	errno = EPIPE;
	if (send(helper, &q, 1, MSG_NOSIGNAL) == 1 &&
	    recvmsg(helper, &m, MSG_CMSG_CLOEXEC) == 1) {
		cm = CMSG_FIRSTHDR(&m);
		if (cm && cm->cmsg_type == SCM_RIGHTS)
			memcpy(&fd, CMSG_DATA(cm), sizeof(int));
		else
			errno = b ? b : EPERM;
	}
	pthread_mutex_unlock(&helper_mu);
	return fd;
}

int privs_stats_fd(void)
{
	if (helper < 0)
		return bpf_enable_stats(BPF_STATS_RUN_TIME);
	return ask_helper(ASK_STATS);
}

int privs_rx_clock_fd(void)
{
	if (helper < 0)
		return oldest_map(NS_NAME(NS_RX_CLOCK));
	return ask_helper(ASK_RX_CLOCK);
}

int privs_may_load(void)
{
	cap_t c = cap_get_proc();
	int may;

	if (!c)
		return 0;
	may = (has(c, CAP_BPF, CAP_EFFECTIVE) &&
	       has(c, CAP_PERFMON, CAP_EFFECTIVE)) ||
	      has(c, CAP_SYS_ADMIN, CAP_EFFECTIVE);
	cap_free(c);
	return may;
}

/* "1000" to 1000; anything else (empty, signs, "01", overflow): -1. */
static long long parse_id(const char *s)
{
	char *end;
	unsigned long long v;

	if (!s || *s < '0' || *s > '9' || (*s == '0' && s[1]))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	return errno || *end || v >= (uid_t)-1 ? -1 : (long long)v;
}

/* Root run by sudo: the invoking user, with that user's groups. */
static int become_sudo_user(char *err, size_t len)
{
	long long uid = parse_id(getenv("SUDO_UID"));
	long long gid = parse_id(getenv("SUDO_GID"));
	const char *name = getenv("SUDO_USER");
	struct passwd *pw;
	gid_t groups[256];
	int n = 256;

	if (getuid() != 0 || !getenv("SUDO_UID"))
		return 0;
	if (uid < 0 || gid < 0) {
		snprintf(err, len, "SUDO_UID/SUDO_GID: not a user and group id (%.40s/%.40s)",
			 getenv("SUDO_UID"),
			 getenv("SUDO_GID") ? getenv("SUDO_GID") : "unset");
		return -1;
	}
	if (uid == 0)
		return 0;	/* root ran sudo: root it stays */
	pw = getpwuid((uid_t)uid);
	/* No such user, another name, or too many groups: the one group. */
	if (!pw || (name && strcmp(name, pw->pw_name)) ||
	    getgrouplist(pw->pw_name, (gid_t)gid, groups, &n) < 0) {
		groups[0] = (gid_t)gid;
		n = 1;
	}
	if (cap_setgroups((gid_t)gid, n, groups) || cap_setuid((uid_t)uid)) {
		snprintf(err, len, "cannot become SUDO_UID %lld: %s", uid,
			 strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * A standalone server raises its descriptor limit for each client's
 * flows: the hard limit goes to fs.nr_open now, while it may.
 */
static void raise_hard_fd_limit(void)
{
	FILE *f = fopen("/proc/sys/fs/nr_open", "r");
	unsigned long long n;
	struct rlimit rl;

	if (!f)
		return;
	if (fscanf(f, "%llu", &n) == 1 && !getrlimit(RLIMIT_NOFILE, &rl) &&
	    rl.rlim_max < n) {
		rl.rlim_max = n;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	fclose(f);
}

/* Which rights this run needs: to the end, and until BPF is loaded. */
static void plan(const struct options *o, const struct workload *wl)
{
	int observe = wl->bit == W_OBSERVE, traced = o->trace || observe;
	int server = !o->client && !o->local && !observe;
	int reloads;	/* BPF is loaded again for each test */
	/* Before Linux 5.8 (no CAP_BPF), loading needs CAP_SYS_ADMIN. */
	capset_t bpf = cap_max_bits() > CAP_BPF
			       ? BIT(CAP_BPF) | BIT(CAP_PERFMON)
			       : BIT(CAP_SYS_ADMIN);

	if (o->debug || o->busy_poll)
		run_caps |= BIT(CAP_NET_ADMIN);
	if (server && ((o->control_port > 0 && o->control_port < 1024) ||
		       (o->port > 0 && o->port < 1024)))
		run_caps |= BIT(CAP_NET_BIND_SERVICE);
	load_caps = BIT(CAP_SYS_RESOURCE) | BIT(CAP_NET_BIND_SERVICE);
	if (traced)
		load_caps |= bpf;
	if (observe)
		load_caps |= BIT(CAP_SYS_PTRACE) | BIT(CAP_DAC_READ_SEARCH);
	reloads = traced && !observe && !o->local &&
		  (server || o->iter_max > 1);
	if (reloads)
		run_caps |= bpf;
}

/* The process's rights at start: is there any to give up? */
static int read_caps(void)
{
	cap_t now = cap_get_proc();
	cap_value_t v;

	if (!now)
		return 0;
	for (v = 0; v < cap_max_bits() && v < 64; v++) {
		if (has(now, v, CAP_PERMITTED))
			have |= BIT(v);
		if (has(now, v, CAP_EFFECTIVE))
			eff |= BIT(v);
	}
	cap_free(now);
	return eff != 0;
}

/* Keep `keep` alone, for good: bounding set, sudo's user, no new ones. */
static int reduce(capset_t keep, char *err, size_t len)
{
	int setpcap = !!(eff & BIT(CAP_SETPCAP));

	if (setpcap)
		drop_bounding(keep);
	if (become_sudo_user(err, len))
		return -1;
	/* What a script's os.execute() runs as root gets no rights either. */
	if (setpcap)
		prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED);
	if (set_caps(keep) || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		snprintf(err, len, "cannot drop privileges: %s",
			 strerror(errno));
		return -1;
	}
	active = 1;
	return 0;
}

int privs_start(const struct options *o, const struct workload *wl,
		char *err, size_t len)
{
	if (!read_caps())
		return 0;
	plan(o, wl);
	if (!o->client && !o->local && wl->bit != W_OBSERVE)
		raise_hard_fd_limit();
	if ((o->trace || wl->bit == W_OBSERVE) &&
	    (eff & BIT(CAP_SYS_ADMIN)) && start_helper(err, len))
		return -1;
	return reduce(run_caps | load_caps, err, len);
}

int privs_none(char *err, size_t len)
{
	return read_caps() ? reduce(0, err, len) : 0;
}

void privs_loaded(void)
{
	if (!active || !load_caps)
		return;
	if (set_caps(run_caps))
		log_err("cannot drop privileges after loading: %s",
			strerror(errno));
	load_caps = 0;
}
