/*
 * helper.c — codumentor-sandbox, the one process that creates processes for
 * the server (DESIGN.md "Process tree"). The server starts it over a
 * SOCK_SEQPACKET socketpair (fd 3) before it has any thread; from then on
 * the server asks, and this program forks, builds the sandbox (spawn.c),
 * reaps, reports exit status, and kills on request or on timeout.
 *
 * It is single-threaded: one poll loop over the socket and a signalfd for
 * SIGCHLD. Its configuration comes from its command line at exec time and
 * no message can change it. It holds no secrets: its environment is only
 * the variables the operator listed for sandboxes. It dies with the server
 * (PR_SET_PDEATHSIG), and every sandbox dies with it (--die-with-parent).
 */
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "helper.h"

#define CHILDREN_MAX	256		/* sandboxes running at once */
#define BLOB_MAX	(64 * 1024)	/* 8192 BPF instructions */

extern char **environ;

struct child {
	uint32_t	 id;		/* the server's request id; 0 = free slot */
	pid_t		 pid;
	int		 status_fd;
	int64_t		 deadline;	/* monotonic ms, 0 = none */
	int		 timed_out;
	int		 killed;
	char		*upper;		/* one command at a time per workspace */
	struct ns_pair	 ns;		/* its overlay, when not held by hold.c */
};

static struct helper_conf	conf;
static struct child		children[CHILDREN_MAX];
static int			sock = SBX_HELPER_SOCK_FD;
static int			available;
static char			reason[SBX_REASON_MAX];

static void
logmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
logmsg(const char *fmt, ...)
{
	va_list ap;

	fputs("codumentor-sandbox: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int64_t
helper_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
helper_fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

char *
helper_strdup(const char *s)
{
	char *p = strdup(s);

	if (p == NULL)
		abort();
	return p;
}

static void
usage(void)
{
	fprintf(stderr, "usage: codumentor-sandbox --parent PID --bwrap PATH "
	    "--base DIR --seccomp-mode audit|enforce|off [--seccomp-blob FILE] "
	    "[--keep-mounted SECONDS] [--no-isolation] [--allow-net]\n"
	    "It is started by codumentor with its socket on fd %d; it is not "
	    "meant to be run by hand.\n", SBX_HELPER_SOCK_FD);
	exit(2);
}

/* The blob into conf; on failure conf.seccomp stays NULL with the reason. */
static void
blob_load(void)
{
	static char	 errbuf[256];
	struct stat	 st;
	ssize_t		 n;
	size_t		 got = 0;
	int		 fd;

	if ((fd = open(conf.seccomp_path, O_RDONLY | O_CLOEXEC)) == -1) {
		snprintf(errbuf, sizeof(errbuf), "%s", strerror(errno));
		conf.seccomp_error = errbuf;
		return;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) || st.st_size == 0 ||
	    st.st_size > BLOB_MAX || st.st_size % 8 != 0) {
		snprintf(errbuf, sizeof(errbuf), "not a BPF program (a regular "
		    "file of 8-byte instructions, at most %d bytes)", BLOB_MAX);
		conf.seccomp_error = errbuf;
		close(fd);
		return;
	}
	if ((conf.seccomp = malloc((size_t)st.st_size)) == NULL)
		abort();
	while (got < (size_t)st.st_size &&
	    (n = read(fd, conf.seccomp + got, (size_t)st.st_size - got)) > 0)
		got += (size_t)n;
	close(fd);
	if (got != (size_t)st.st_size) {
		snprintf(errbuf, sizeof(errbuf), "short read");
		conf.seccomp_error = errbuf;
		free(conf.seccomp);
		conf.seccomp = NULL;
		return;
	}
	conf.seccomp_len = got;
}

static void
parse_args(int argc, char **argv, pid_t *parent)
{
	int	i;
	long	v;
	char	*end;

	*parent = 0;
	conf.seccomp_mode = "audit";
	conf.isolation = 1;
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--no-isolation") == 0)
			conf.isolation = 0;
		else if (strcmp(argv[i], "--allow-net") == 0)
			conf.allow_net = 1;
		else if (i + 1 >= argc)
			usage();
		else if (strcmp(argv[i], "--parent") == 0) {
			v = strtol(argv[++i], &end, 10);
			if (*end != '\0' || v <= 1)
				usage();
			*parent = (pid_t)v;
		} else if (strcmp(argv[i], "--bwrap") == 0)
			conf.bwrap = argv[++i];
		else if (strcmp(argv[i], "--base") == 0)
			conf.base = argv[++i];
		else if (strcmp(argv[i], "--seccomp-blob") == 0)
			conf.seccomp_path = argv[++i];
		else if (strcmp(argv[i], "--seccomp-mode") == 0)
			conf.seccomp_mode = argv[++i];
		else if (strcmp(argv[i], "--keep-mounted") == 0) {
			v = strtol(argv[++i], &end, 10);
			if (*end != '\0' || v < 0 || v > 86400)
				usage();
			conf.keep_ms = (int64_t)v * 1000;
		}
		else
			usage();
	}
	if (*parent == 0 || conf.bwrap == NULL || conf.base == NULL ||
	    *conf.base != '/' || (strcmp(conf.seccomp_mode, "audit") != 0 &&
	    strcmp(conf.seccomp_mode, "enforce") != 0 &&
	    strcmp(conf.seccomp_mode, "off") != 0))
		usage();
}

/*
 * Only the socket survives from whatever the parent had open; 0 and 1 are
 * /dev/null, 2 stays for this program's own diagnostics.
 */
static void
fds_clean(void)
{
	int null, type;
	socklen_t len = sizeof(type);

	if (getsockopt(sock, SOL_SOCKET, SO_TYPE, &type, &len) == -1 ||
	    type != SOCK_SEQPACKET) {
		logmsg("fd %d is not a SOCK_SEQPACKET socket", sock);
		exit(2);
	}
	if (close_range(SBX_HELPER_SOCK_FD + 1, ~0U, 0) == -1) {
		logmsg("close_range: %s", strerror(errno));
		exit(2);
	}
	fcntl(sock, F_SETFD, FD_CLOEXEC);
	if ((null = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1) {
		logmsg("/dev/null: %s", strerror(errno));
		exit(2);
	}
	dup2(null, 0);
	dup2(null, 1);
	close(null);
}

static void
send_json(enum sbx_type type, uint32_t id, struct json_object *o)
{
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);

	if (sbx_send(sock, type, id, s, NULL, 0) == -1)
		logmsg("send %s: %s", sbx_type_name(type), strerror(errno));
	json_object_put(o);
}

static void
reply_error(uint32_t id, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
reply_error(uint32_t id, const char *fmt, ...)
{
	struct json_object	*o = json_object_new_object();
	char			 msg[SBX_REASON_MAX];
	va_list			 ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_object_object_add(o, "message", json_object_new_string(msg));
	send_json(SBX_ERROR, id, o);
}

static void
send_hello(const struct check *v, size_t n)
{
	struct json_object	*o = json_object_new_object(), *a, *c;
	size_t			 i;

	json_object_object_add(o, "available", json_object_new_boolean(available));
	json_object_object_add(o, "isolation", json_object_new_boolean(conf.isolation));
	json_object_object_add(o, "reason", json_object_new_string(reason));
	a = json_object_new_array();
	for (i = 0; i < n; i++) {
		c = json_object_new_object();
		json_object_object_add(c, "name", json_object_new_string(v[i].name));
		json_object_object_add(c, "ok", json_object_new_int(v[i].ok));
		json_object_object_add(c, "detail", json_object_new_string(v[i].detail));
		json_object_array_add(a, c);
	}
	json_object_object_add(o, "checks", a);
	send_json(SBX_HELLO, 0, o);
}

static struct child *
child_by_id(uint32_t id)
{
	size_t i;

	for (i = 0; i < CHILDREN_MAX; i++)
		if (children[i].id == id && id != 0)
			return &children[i];
	return NULL;
}

/* A command runs in the workspace of this upper layer. */
static int
busy(const char *upper)
{
	size_t i;

	for (i = 0; i < CHILDREN_MAX; i++)
		if (children[i].id != 0 && strcmp(children[i].upper, upper) == 0)
			return 1;
	return 0;
}

static void
child_kill(struct child *ch)
{
	/* bwrap's death takes its pid namespace down (--die-with-parent). */
	if (!conf.isolation)
		kill(-ch->pid, SIGKILL);
	kill(ch->pid, SIGKILL);
}

static void
on_spawn(struct sbx_msg *m)
{
	struct json_tokener	*tok;
	struct json_object	*o;
	struct spawn_req	 r;
	struct spawned		 sp;
	struct child		*ch = NULL;
	const struct ns_pair	*join;
	char			 err[SBX_REASON_MAX];
	size_t			 i;
	int			 rc;

	if (m->nfds < 1 || m->nfds > 2) {
		reply_error(m->hdr.id, "SPAWN carries 1 or 2 descriptors, not %d",
		    m->nfds);
		return;
	}
	if (!available) {
		reply_error(m->hdr.id, "sandbox unavailable: %s", reason);
		return;
	}
	if (child_by_id(m->hdr.id) != NULL || m->hdr.id == 0) {
		reply_error(m->hdr.id, "request id %u is in use", m->hdr.id);
		return;
	}
	for (i = 0; i < CHILDREN_MAX && ch == NULL; i++)
		if (children[i].id == 0)
			ch = &children[i];
	if (ch == NULL) {
		reply_error(m->hdr.id, "too many sandboxes running (%d)",
		    CHILDREN_MAX);
		return;
	}
	tok = json_tokener_new();
	o = json_tokener_parse_ex(tok, m->body, (int)m->len);
	if (o == NULL || json_tokener_get_error(tok) != json_tokener_success) {
		json_tokener_free(tok);
		json_object_put(o);
		reply_error(m->hdr.id, "SPAWN: malformed JSON");
		return;
	}
	json_tokener_free(tok);
	if (spawn_parse(&conf, o, &r, err, sizeof(err)) == -1) {
		json_object_put(o);
		spawn_req_free(&r);
		reply_error(m->hdr.id, "SPAWN: %s", err);
		return;
	}
	json_object_put(o);
	if (busy(r.upper)) {
		reply_error(m->hdr.id, "another command is running in this "
		    "workspace");
		spawn_req_free(&r);
		return;
	}
	r.out_fd = m->fds[0];
	r.err_fd = m->fds[m->nfds - 1];
	/*
	 * The namespaces come back even when nothing is held between
	 * commands: closed after the exit is reported, their teardown (the
	 * overlay's unmount) is not part of the command's time.
	 */
	r.hold = r.hold && conf.isolation;
	join = r.hold && hold_enabled() ? hold_find(&r) : NULL;
	rc = spawn_start(&conf, &r, join, &sp, err, sizeof(err));
	if (rc == -1 && join != NULL && strncmp(err, "hold:", 5) == 0) {
		/* The held overlay cannot be entered: mount a fresh one. */
		logmsg("request %u: %s; mounting the overlay again", m->hdr.id,
		    err);
		hold_forget(r.upper);
		join = NULL;
		rc = spawn_start(&conf, &r, NULL, &sp, err, sizeof(err));
	}
	if (rc == 0 && sp.ns.user >= 0 && hold_enabled()) {
		hold_add(&r, sp.ns);
		sp.ns.user = sp.ns.mnt = -1;
	}
	if (rc == -1) {
		logmsg("request %u: sandbox setup failed: %s", m->hdr.id, err);
		reply_error(m->hdr.id, "sandbox setup failed: %s", err);
		spawn_req_free(&r);
		return;
	}
	ch->id = m->hdr.id;
	ch->pid = sp.pid;
	ch->status_fd = sp.status_fd;
	ch->deadline = r.timeout_ms ? helper_now_ms() + r.timeout_ms : 0;
	ch->timed_out = ch->killed = 0;
	ch->upper = r.upper;
	ch->ns = sp.ns;
	r.upper = NULL;
	spawn_req_free(&r);
	o = json_object_new_object();
	json_object_object_add(o, "pid", json_object_new_int(sp.pid));
	send_json(SBX_SPAWNED, ch->id, o);
}

static void
on_kill(const struct sbx_msg *m)
{
	struct child *ch = child_by_id(m->hdr.id);

	if (ch == NULL) {
		reply_error(m->hdr.id, "KILL: no sandbox with request id %u",
		    m->hdr.id);
		return;
	}
	ch->killed = 1;
	child_kill(ch);
}

/*
 * FORGET: the server changed a workspace's layers itself. The held
 * overlay is replaced by a fresh mount now, off the path of the next
 * command (an edit is usually followed by a run). No reply.
 */
static void
on_forget(const struct sbx_msg *m)
{
	struct json_object	*o, *v;
	const char		*upper;

	o = json_tokener_parse(m->body);
	if (o == NULL || !json_object_object_get_ex(o, "upper", &v) ||
	    !json_object_is_type(v, json_type_string)) {
		reply_error(m->hdr.id, "FORGET: expected {\"upper\": path}");
		json_object_put(o);
		return;
	}
	upper = json_object_get_string(v);
	hold_refresh(&conf, upper, busy(upper));
	json_object_put(o);
}

/*
 * PREPARE: a turn starts in this workspace; mount its overlay now so that
 * the turn's first command finds it held. A refusal is answered (the
 * server sent paths it must not); a failure to mount is not: the command
 * will meet it, and report it, when it runs. No reply otherwise.
 */
static void
on_prepare(const struct sbx_msg *m)
{
	struct json_object	*o;
	struct spawn_req	 r;
	char			 err[SBX_REASON_MAX];

	if (!available || !conf.isolation || !hold_enabled())
		return;
	o = json_tokener_parse(m->body);
	if (spawn_parse_layers(&conf, o, &r, err, sizeof(err)) == -1) {
		reply_error(m->hdr.id, "PREPARE: %s", err);
		goto out;
	}
	/* A command running there has its overlay already. */
	if (!busy(r.upper))
		hold_prepare(&conf, &r);
out:
	spawn_req_free(&r);
	json_object_put(o);
}

/* The one dispatch function of this side: every type is answered. */
static void
dispatch(struct sbx_msg *m)
{
	switch (m->hdr.type) {
	case SBX_SPAWN:
		on_spawn(m);
		break;
	case SBX_FORGET:
		on_forget(m);
		break;
	case SBX_PREPARE:
		on_prepare(m);
		break;
	case SBX_KILL:
		on_kill(m);
		break;
	default:
		reply_error(m->hdr.id, "unexpected message type %u (%s)",
		    m->hdr.type, sbx_type_name(m->hdr.type));
		break;
	}
	/* The children have their copies; ours go in every case. */
	sbx_msg_close_fds(m);
}

static void
child_exited(struct child *ch, int st)
{
	struct json_object	*o = json_object_new_object();
	int			 started;

	if (!conf.isolation)
		kill(-ch->pid, SIGKILL);	/* what it left in its group */
	started = spawn_status_started(ch->status_fd);
	json_object_object_add(o, "started", json_object_new_boolean(started));
	json_object_object_add(o, "exit_code", json_object_new_int(
	    WIFEXITED(st) ? WEXITSTATUS(st) : -1));
	json_object_object_add(o, "signal", json_object_new_int(
	    WIFSIGNALED(st) ? WTERMSIG(st) : 0));
	json_object_object_add(o, "timed_out", json_object_new_boolean(ch->timed_out));
	json_object_object_add(o, "killed", json_object_new_boolean(ch->killed));
	if (!started && !ch->timed_out && !ch->killed)
		json_object_object_add(o, "error", json_object_new_string(
		    "bwrap could not set up the sandbox; its message is in the "
		    "output"));
	send_json(SBX_EXITED, ch->id, o);
	if (ch->status_fd >= 0)
		close(ch->status_fd);
	if (ch->ns.user >= 0) {
		close(ch->ns.user);
		close(ch->ns.mnt);
	}
	free(ch->upper);
	memset(ch, 0, sizeof(*ch));
}

static void
reap(int sfd)
{
	struct signalfd_siginfo	si;
	size_t			i;
	pid_t			pid;
	int			st;

	while (read(sfd, &si, sizeof(si)) == sizeof(si))
		;
	while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
		for (i = 0; i < CHILDREN_MAX; i++)
			if (children[i].id != 0 && children[i].pid == pid) {
				child_exited(&children[i], st);
				break;
			}
}

/* Kill what is past its deadline; the poll timeout until the next one. */
static int
deadlines(void)
{
	int64_t	now = helper_now_ms(), next = -1, left;
	size_t	i;

	for (i = 0; i < CHILDREN_MAX; i++) {
		if (children[i].id == 0 || children[i].deadline == 0)
			continue;
		if (children[i].deadline <= now) {
			children[i].timed_out = 1;
			children[i].deadline = 0;
			child_kill(&children[i]);
			continue;
		}
		left = children[i].deadline - now;
		if (next == -1 || left < next)
			next = left;
	}
	return next > 60000 ? 60000 : (int)next;
}

static void
kill_all(void)
{
	size_t i;

	for (i = 0; i < CHILDREN_MAX; i++)
		if (children[i].id != 0)
			child_kill(&children[i]);
}

int
main(int argc, char **argv)
{
	static struct sbx_msg	m;
	struct check		v[SBX_CHECKS_MAX];
	struct pollfd		pfd[2];
	sigset_t		set;
	pid_t			parent;
	size_t			n;
	int			sfd, rc, timeout, held;

	parse_args(argc, argv, &parent);
	fds_clean();
	/* With the server, or not at all. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		exit(0);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if ((sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) == -1) {
		logmsg("signalfd: %s", strerror(errno));
		exit(1);
	}
	conf.passenv = environ;
	conf.uid = getuid();
	conf.gid = getgid();
	if (strcmp(conf.seccomp_mode, "off") != 0 && conf.seccomp_path != NULL)
		blob_load();
	n = selftest_run(&conf, v, reason, sizeof(reason));
	available = *reason == '\0';
	send_hello(v, n);

	pfd[0].fd = sock;
	pfd[0].events = POLLIN;
	pfd[1].fd = sfd;
	pfd[1].events = POLLIN;
	hold_init(conf.keep_ms);
	for (;;) {
		timeout = deadlines();
		held = hold_expire();
		if (held >= 0 && (timeout < 0 || held < timeout))
			timeout = held;
		rc = poll(pfd, 2, timeout);
		if (rc == -1 && errno != EINTR) {
			logmsg("poll: %s", strerror(errno));
			break;
		}
		if (rc <= 0)
			continue;
		if (pfd[1].revents & POLLIN)
			reap(sfd);
		if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			rc = sbx_recv(sock, &m);
			if (rc == 0)
				break;		/* the server is gone */
			if (rc == -1) {
				if (errno == EBADMSG) {
					reply_error(0, "malformed message");
					continue;
				}
				logmsg("recv: %s", strerror(errno));
				break;
			}
			dispatch(&m);
		}
	}
	kill_all();
	hold_clear();
	free(conf.seccomp);
	return 0;
}
