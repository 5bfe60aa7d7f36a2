/*
 * sandbox_client.c — the server's side of codumentor-sandbox (sandbox.h,
 * sandbox/proto.h). sandbox_start() forks and execs the helper once, before
 * the server has threads, and reads its HELLO; after that this process never
 * forks or execs again: every command is a SPAWN request.
 *
 * Many turns run commands at once: sends are serialised by a mutex, each
 * request has an id, and one reader thread routes the helper's replies to
 * the waiting callers. If the helper dies, isolation becomes unavailable for
 * good (the server cannot fork to restart it) and every caller fails closed.
 * It does not build sandboxes or judge requests; the helper does.
 */
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "app.h"
#include "log.h"
#include "proto.h"
#include "sandbox.h"
#include "sandbox_setup.h"
#include "util.h"
#include "workspace.h"

#define HELLO_TIMEOUT_MS	60000	/* the self-test builds one sandbox */
#define REPLY_GRACE_MS		10000	/* past the timeout before we kill */
#define OUTPUT_CAP_DEFAULT	(64 * 1024)
#define PASSENV_MAX		32
#define SOCK_BUF		(512 * 1024)

/* One request in flight; lives on its caller's stack. */
struct waiter {
	uint32_t	 id;
	int		 spawned, exited, refused, dead;
	int		 started, exit_code, signal, timed_out, killed;
	char		 error[256];
	int		 wake;		/* eventfd: a reply came, or the helper died */
	struct waiter	*next;
};

static struct {
	pthread_mutex_t	 lock;		/* everything below but sock writes */
	pthread_mutex_t	 send_lock;
	int		 sock;
	pid_t		 pid;
	int		 started;	/* sandbox_start ran */
	int		 available;
	int		 isolation;
	int		 dead;
	int		 stopping;	/* sandbox_stop: the EOF is ours */
	int		 quiet;		/* the CLI prints its own errors */
	char		 reason[512];
	struct sandbox_check checks[SBX_CHECKS_MAX + 1];
	size_t		 nchecks;
	pthread_t	 reader;
	int		 reader_running;
	uint32_t	 next_id;
	struct waiter	*waiters;
} sb = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.send_lock = PTHREAD_MUTEX_INITIALIZER,
	.sock = -1,
	.pid = -1,
	.reason = "the sandbox helper has not been started",
};

static void
add_check(const char *name, int ok, const char *detail)
{
	struct sandbox_check *c;

	if (sb.nchecks >= sizeof(sb.checks) / sizeof(sb.checks[0]))
		return;
	c = &sb.checks[sb.nchecks++];
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->ok = ok;
	snprintf(c->detail, sizeof(c->detail), "%s", detail);
}

/* Mark isolation unusable; lock held or not needed. */
static void
set_unavailable(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
set_unavailable(const char *fmt, ...)
{
	va_list ap;

	sb.available = 0;
	va_start(ap, fmt);
	vsnprintf(sb.reason, sizeof(sb.reason), fmt, ap);
	va_end(ap);
}

static int
hello_parse(const struct sbx_msg *m)
{
	struct json_object	*o, *v, *a, *c, *f;
	size_t			 i, n;

	if (m->hdr.type != SBX_HELLO ||
	    (o = json_tokener_parse(m->body)) == NULL)
		return -1;
	sb.available = json_object_object_get_ex(o, "available", &v) &&
	    json_object_get_boolean(v);
	sb.isolation = json_object_object_get_ex(o, "isolation", &v) &&
	    json_object_get_boolean(v);
	if (json_object_object_get_ex(o, "reason", &v))
		snprintf(sb.reason, sizeof(sb.reason), "%s",
		    json_object_get_string(v));
	if (json_object_object_get_ex(o, "checks", &a) &&
	    json_object_is_type(a, json_type_array)) {
		n = json_object_array_length(a);
		for (i = 0; i < n && i < SBX_CHECKS_MAX; i++) {
			c = json_object_array_get_idx(a, i);
			add_check(json_object_object_get_ex(c, "name", &f) ?
			    json_object_get_string(f) : "?",
			    json_object_object_get_ex(c, "ok", &f) ?
			    json_object_get_int(f) : 0,
			    json_object_object_get_ex(c, "detail", &f) ?
			    json_object_get_string(f) : "");
		}
	}
	json_object_put(o);
	if (!sb.available && *sb.reason == '\0')
		snprintf(sb.reason, sizeof(sb.reason), "the sandbox helper "
		    "reported a failure without a reason");
	return 0;
}

/* Wait for the helper's HELLO; the server has no threads yet. */
static int
hello_wait(void)
{
	struct sbx_msg	*m = xmalloc(sizeof(*m));
	struct pollfd	 pfd = { sb.sock, POLLIN, 0 };
	int		 rc, st;

	rc = poll(&pfd, 1, HELLO_TIMEOUT_MS);
	if (rc == 1)
		rc = sbx_recv(sb.sock, m);
	else if (rc == 0)
		errno = ETIMEDOUT;
	if (rc == 1 && hello_parse(m) == 0) {
		sbx_msg_close_fds(m);
		free(m);
		return 0;
	}
	if (rc == 1)
		sbx_msg_close_fds(m);
	free(m);
	if (rc == 0 && waitpid(sb.pid, &st, 0) == sb.pid) {
		sb.pid = -1;
		set_unavailable("the sandbox helper exited during its start "
		    "(status %d); see the server's standard error",
		    WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	} else
		set_unavailable("the sandbox helper did not say hello: %s",
		    rc == 1 ? "malformed message" : strerror(errno));
	return -1;
}

static void	*reader_main(void *);

int
sandbox_start_opts(const struct sandbox_opts *opts)
{
	char	 helper[PATH_MAX], bwrap[PATH_MAX], blob[PATH_MAX];
	char	 parent[32], keep[16], *argv[18], *envp[PASSENV_MAX + 1];
	const char *mode = sbx_seccomp_mode();
	int	 sv[2], argc = 0;
	size_t	 i, nenv = 0;
	pid_t	 pid;

	sb.started = 1;
	sb.nchecks = 0;
	sb.quiet = opts != NULL && opts->quiet;
	sb.isolation = app.cfg.workspace_isolation.enabled;
	if (!sb.isolation && !sb.quiet)
		log_warn("*** workspace_isolation.enabled is false: agent shell "
		    "commands run directly on the host as the service user, "
		    "gated only by approval ***");
	sbx_helper_path(helper, sizeof(helper));
	if (access(helper, X_OK) == -1) {
		add_check("helper", 0, helper);
		set_unavailable("the sandbox helper %s cannot be run: %s",
		    helper, strerror(errno));
		goto fail_early;
	}
	add_check("helper", 1, helper);
	sbx_bwrap_path(bwrap, sizeof(bwrap));
	sbx_blob_path(blob, sizeof(blob), mode);
	(void)mkdir_p(app.cfg.workspace_isolation.base_dir, 0700);

	snprintf(parent, sizeof(parent), "%d", (int)getpid());
	argv[argc++] = "codumentor-sandbox";
	argv[argc++] = "--parent";
	argv[argc++] = parent;
	argv[argc++] = "--bwrap";
	argv[argc++] = bwrap;
	argv[argc++] = "--base";
	argv[argc++] = app.cfg.workspace_isolation.base_dir;
	argv[argc++] = "--seccomp-mode";
	argv[argc++] = (char *)mode;
	if (strcmp(mode, "off") != 0) {
		argv[argc++] = "--seccomp-blob";
		argv[argc++] = blob;
	}
	snprintf(keep, sizeof(keep), "%d",
	    app.cfg.sandbox.keep_mounted_seconds);
	argv[argc++] = "--keep-mounted";
	argv[argc++] = keep;
	if (!sb.isolation)
		argv[argc++] = "--no-isolation";
	if (!app.cfg.sandbox.unshare_net || (opts != NULL && opts->allow_net))
		argv[argc++] = "--allow-net";
	argv[argc] = NULL;
	nenv = sbx_passenv(envp, PASSENV_MAX);

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1) {
		set_unavailable("socketpair: %s", strerror(errno));
		goto fail;
	}
	for (i = 0; i < 2; i++) {
		int sz = SOCK_BUF;

		(void)setsockopt(sv[i], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
		(void)setsockopt(sv[i], SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	}
	/* The only fork of this process: no thread exists yet. */
	if ((pid = fork()) == -1) {
		close(sv[0]);
		close(sv[1]);
		set_unavailable("fork: %s", strerror(errno));
		goto fail;
	}
	if (pid == 0) {
		if (sv[1] == SBX_HELPER_SOCK_FD)
			fcntl(sv[1], F_SETFD, 0);
		else if (dup2(sv[1], SBX_HELPER_SOCK_FD) == -1)
			_exit(127);
		close_range(SBX_HELPER_SOCK_FD + 1, ~0U, 0);
		execve(helper, argv, envp);
		_exit(127);
	}
	close(sv[1]);
	sb.sock = sv[0];
	sb.pid = pid;
	for (i = 0; i < nenv; i++)
		free(envp[i]);
	if (hello_wait() == -1)
		goto fail_early;
	if (sb.quiet)
		;
	else if (sb.available)
		log_info("sandbox helper started (pid %d): %s", (int)pid,
		    sb.isolation ? "isolation available" : "host-direct");
	else
		log_error("sandbox unavailable, execution tools are disabled: %s",
		    sb.reason);
	return sb.available ? 0 : -1;
fail:
	for (i = 0; i < nenv; i++)
		free(envp[i]);
fail_early:
	if (!sb.quiet)
		log_error("sandbox unavailable, execution tools are disabled: %s",
		    sb.reason);
	return -1;
}

/*
 * The reader thread starts with the first request or question, not in
 * sandbox_start(): that runs before the server's self-guard (seccomp and a
 * Landlock domain, which only threads created afterwards inherit).
 */
static void
reader_start(void)
{
	if (sb.sock < 0)
		return;
	if (pthread_create(&sb.reader, NULL, reader_main, NULL) != 0) {
		pthread_mutex_lock(&sb.lock);
		set_unavailable("cannot start the sandbox reader thread");
		pthread_mutex_unlock(&sb.lock);
		return;
	}
	sb.reader_running = 1;
}

static void
reader_ensure(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, reader_start);
}

int
sandbox_start(void)
{
	return sandbox_start_opts(NULL);
}

void
sandbox_stop(void)
{
	int	st, i;

	pthread_mutex_lock(&sb.lock);
	sb.stopping = 1;
	pthread_mutex_unlock(&sb.lock);
	if (sb.sock >= 0)
		shutdown(sb.sock, SHUT_RDWR);	/* the helper sees EOF and ends */
	if (sb.reader_running) {
		pthread_join(sb.reader, NULL);
		sb.reader_running = 0;
	}
	if (sb.pid > 0) {
		for (i = 0; i < 200; i++) {
			if (waitpid(sb.pid, &st, WNOHANG) != 0)
				break;
			poll(NULL, 0, 10);
		}
		if (i == 200) {
			kill(sb.pid, SIGKILL);
			waitpid(sb.pid, &st, 0);
		}
		sb.pid = -1;
	}
	if (sb.sock >= 0) {
		close(sb.sock);
		sb.sock = -1;
	}
	pthread_mutex_lock(&sb.lock);
	if (sb.available)
		set_unavailable("the sandbox helper was stopped");
	pthread_mutex_unlock(&sb.lock);
}

int
sandbox_available(char *reason, size_t len)
{
	int avail;

	reader_ensure();
	pthread_mutex_lock(&sb.lock);
	avail = sb.available;
	if (reason != NULL && len > 0)
		snprintf(reason, len, "%s", avail ? "" : sb.reason);
	pthread_mutex_unlock(&sb.lock);
	return avail;
}

int
sandbox_isolated(void)
{
	return sb.started ? sb.isolation : app.cfg.workspace_isolation.enabled;
}

size_t
sandbox_checks(struct sandbox_check *v, size_t max)
{
	size_t i;

	pthread_mutex_lock(&sb.lock);
	for (i = 0; i < sb.nchecks && i < max; i++)
		v[i] = sb.checks[i];
	pthread_mutex_unlock(&sb.lock);
	return i;
}

/* ------------------------------------------------------------ replies */

static struct waiter *
waiter_find(uint32_t id)
{
	struct waiter *w;

	for (w = sb.waiters; w != NULL; w = w->next)
		if (w->id == id)
			return w;
	return NULL;
}

static int
json_int(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_int(v) : 0;
}

static void
on_exited(struct waiter *w, struct json_object *o)
{
	struct json_object *v;

	w->exited = 1;
	w->started = json_int(o, "started");
	w->exit_code = json_int(o, "exit_code");
	w->signal = json_int(o, "signal");
	w->timed_out = json_int(o, "timed_out");
	w->killed = json_int(o, "killed");
	if (json_object_object_get_ex(o, "error", &v))
		snprintf(w->error, sizeof(w->error), "%s",
		    json_object_get_string(v));
}

/* The one dispatch function of this side; lock held. */
static void
dispatch(const struct sbx_msg *m)
{
	struct json_object	*o = json_tokener_parse(m->body), *v;
	struct waiter		*w = waiter_find(m->hdr.id);

	if (o == NULL || !json_object_is_type(o, json_type_object)) {
		log_error("sandbox helper: %s %u: malformed body",
		    sbx_type_name(m->hdr.type), m->hdr.id);
		json_object_put(o);
		return;
	}
	switch (m->hdr.type) {
	case SBX_SPAWNED:
		if (w != NULL)
			w->spawned = 1;
		break;
	case SBX_EXITED:
		if (w != NULL)
			on_exited(w, o);
		break;
	case SBX_ERROR:
		v = NULL;
		json_object_object_get_ex(o, "message", &v);
		if (w != NULL) {
			w->refused = 1;
			snprintf(w->error, sizeof(w->error), "%s",
			    v ? json_object_get_string(v) : "refused");
		} else
			log_error("sandbox helper: error for request %u: %s",
			    m->hdr.id, v ? json_object_get_string(v) : "?");
		break;
	default:
		/* Not ours to guess at: the helper and we disagree. */
		log_error("sandbox helper: unexpected message type %u; "
		    "isolation disabled", m->hdr.type);
		set_unavailable("the sandbox helper sent an unexpected "
		    "message (type %u)", m->hdr.type);
		for (w = sb.waiters; w != NULL; w = w->next)
			w->dead = 1;
		break;
	}
	json_object_put(o);
	for (w = sb.waiters; w != NULL; w = w->next)
		(void)eventfd_write(w->wake, 1);
}

static void *
reader_main(void *arg)
{
	struct sbx_msg	*m = xmalloc(sizeof(*m));
	struct waiter	*w;
	int		 rc;

	for (;;) {
		rc = sbx_recv(sb.sock, m);
		if (rc == -1 && errno == EBADMSG) {
			log_error("sandbox helper: malformed message dropped");
			continue;
		}
		if (rc <= 0)
			break;
		sbx_msg_close_fds(m);	/* the helper never sends any */
		pthread_mutex_lock(&sb.lock);
		dispatch(m);
		pthread_mutex_unlock(&sb.lock);
	}
	pthread_mutex_lock(&sb.lock);
	if (sb.available && !sb.stopping) {
		set_unavailable("the sandbox helper exited; execution tools "
		    "are disabled until the server restarts");
		log_error("%s", sb.reason);
	}
	sb.dead = 1;
	for (w = sb.waiters; w != NULL; w = w->next) {
		w->dead = 1;
		(void)eventfd_write(w->wake, 1);
	}
	pthread_mutex_unlock(&sb.lock);
	free(m);
	return NULL;
}

/* ------------------------------------------------------------ requests */

static void
waiter_remove(struct waiter *w)
{
	struct waiter **pp;

	for (pp = &sb.waiters; *pp != NULL; pp = &(*pp)->next)
		if (*pp == w) {
			*pp = w->next;
			break;
		}
}

static int
send_locked(enum sbx_type type, uint32_t id, const char *body, const int *fds,
    int nfds)
{
	int rc;

	pthread_mutex_lock(&sb.send_lock);
	rc = sbx_send(sb.sock, type, id, body, fds, nfds);
	pthread_mutex_unlock(&sb.send_lock);
	return rc;
}

/* Read what out_fd (non-blocking) holds now; 1 at its EOF. */
static int
drain(int out_fd, struct capture *c)
{
	char	buf[16384];
	ssize_t	n;

	for (;;) {
		n = read(out_fd, buf, sizeof(buf));
		if (n > 0)
			capture_add(c, buf, (size_t)n);
		else if (n == 0)
			return 1;
		else if (errno != EINTR)
			return errno != EAGAIN;
	}
}

/*
 * Send SPAWN with body and fds (then close sent_fd, our copy of the write
 * end, or the output would never end), then follow the request until it
 * ends: read the command's output from out_fd (if not -1), kill it on
 * cancel or when the helper overstays the timeout, and fill res.
 *
 * The request ends with the helper's EXITED, not with the output's EOF:
 * the command's own writes were in the pipe before it exited, so one last
 * drain gets all of them. Waiting for the EOF would wait for bwrap's pid 1
 * and its namespaces to be torn down (about half a millisecond per
 * command); what is not written by then comes from background processes
 * that die with the sandbox.
 */
static int
run_request(const char *body, const int *fds, int nfds, int sent_fd,
    int out_fd, int timeout_ms, size_t cap, volatile int *cancel,
    struct sandbox_result *res)
{
	struct waiter	 w;
	struct capture	 c;
	struct pollfd	 pfd[2];
	int64_t		 start = mono_ms(), kill_at, give_up = 0;
	int		 eof = out_fd < 0, kill_sent = 0, cancelled = 0, rc = -1;
	int		 done, npfd;
	eventfd_t	 ev;
	ssize_t		 n;

	memset(&w, 0, sizeof(w));
	memset(&c, 0, sizeof(c));
	if ((w.wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) == -1) {
		snprintf(res->error, sizeof(res->error), "eventfd: %s",
		    strerror(errno));
		goto out;
	}
	if (out_fd >= 0) {
		(void)fcntl(out_fd, F_SETFL, fcntl(out_fd, F_GETFL) | O_NONBLOCK);
		c.head_cap = cap / 2;
		c.tail_cap = cap - c.head_cap;
		c.head = xmalloc(c.head_cap + 1);
		c.tail = xmalloc(c.tail_cap + 1);
	}
	kill_at = timeout_ms > 0 ? start + timeout_ms + REPLY_GRACE_MS : 0;

	pthread_mutex_lock(&sb.lock);
	if (!sb.available || sb.dead) {
		snprintf(res->error, sizeof(res->error), "%s", sb.reason);
		pthread_mutex_unlock(&sb.lock);
		goto out;
	}
	if (++sb.next_id == 0)
		sb.next_id = 1;
	w.id = sb.next_id;
	w.next = sb.waiters;
	sb.waiters = &w;
	pthread_mutex_unlock(&sb.lock);

	n = send_locked(SBX_SPAWN, w.id, body, fds, nfds);
	if (sent_fd >= 0) {
		close(sent_fd);
		sent_fd = -1;
	}
	if (n == -1) {
		snprintf(res->error, sizeof(res->error), "cannot reach the "
		    "sandbox helper: %s", strerror(errno));
		pthread_mutex_lock(&sb.lock);
		waiter_remove(&w);
		pthread_mutex_unlock(&sb.lock);
		goto out;
	}
	for (;;) {
		int64_t now = mono_ms();

		pthread_mutex_lock(&sb.lock);
		done = w.refused || w.dead || w.exited ||
		    (give_up && now > give_up);
		if (done)
			waiter_remove(&w);
		pthread_mutex_unlock(&sb.lock);
		if (done) {
			if (!eof)
				eof = drain(out_fd, &c);
			break;
		}
		if (!kill_sent && ((cancel != NULL && *cancel) ||
		    (kill_at && now > kill_at))) {
			cancelled = cancel != NULL && *cancel;
			(void)send_locked(SBX_KILL, w.id, NULL, NULL, 0);
			kill_sent = 1;
			give_up = now + REPLY_GRACE_MS;
		}
		pfd[0].fd = w.wake;
		pfd[0].events = POLLIN;
		pfd[1].fd = out_fd;
		pfd[1].events = POLLIN;
		npfd = eof ? 1 : 2;
		/* 100 ms: the cancel flag is polled, not signalled. */
		if (poll(pfd, (nfds_t)npfd, 100) <= 0)
			continue;
		if (pfd[0].revents)
			(void)eventfd_read(w.wake, &ev);
		if (npfd == 2 && pfd[1].revents)
			eof = drain(out_fd, &c);
	}
	if (out_fd >= 0)
		capture_finish(&c, res);
	res->cancelled = cancelled;
	if (w.refused) {
		snprintf(res->error, sizeof(res->error), "%s", w.error);
	} else if (w.exited && !w.started) {
		/* bwrap itself failed: its own message is the output. */
		snprintf(res->error, sizeof(res->error), "sandbox setup failed: "
		    "%.200s", res->output && *res->output ? res->output :
		    w.error);
	} else if (!w.exited) {
		res->started = w.spawned;
		snprintf(res->error, sizeof(res->error), "%s",
		    w.dead ? "the sandbox helper exited during the command" :
		    "the sandbox helper did not report the command's end");
	} else {
		res->started = 1;
		res->exit_code = w.signal ? -1 : w.exit_code;
		res->signal = w.signal;
		res->timed_out = w.timed_out;
		res->cancelled = cancelled || (w.killed && !w.timed_out &&
		    cancel != NULL && *cancel);
		rc = 0;
	}
out:
	if (sent_fd >= 0)
		close(sent_fd);
	if (w.wake >= 0)
		close(w.wake);
	free(c.head);
	free(c.tail);
	return rc;
}

int
sandbox_run(const struct sandbox_run *run, struct sandbox_result *res)
{
	struct workspace	 ws;
	char			*body;
	int			 p[2], rc;

	memset(res, 0, sizeof(*res));
	if (!sandbox_available(res->error, sizeof(res->error)))
		return -1;
	if (run->argv == NULL || run->argv[0] == NULL) {
		snprintf(res->error, sizeof(res->error), "no command");
		return -1;
	}
	if (workspace_ensure(run->conversation_id, &ws) == -1) {
		snprintf(res->error, sizeof(res->error), "the conversation's "
		    "workspace cannot be created: %s", strerror(errno));
		return -1;
	}
	(void)workspace_touch(&ws);
	body = sbx_spawn_body(ws.lower, ws.upper, ws.work, ws.merged, run->argv,
	    run->env, run->nenv, !app.cfg.sandbox.unshare_net, 1,
	    run->timeout_ms);
	if (strlen(body) > SBX_BODY_MAX) {
		free(body);
		snprintf(res->error, sizeof(res->error), "the command is longer "
		    "than %d bytes", SBX_BODY_MAX);
		return -1;
	}
	if (pipe2(p, O_CLOEXEC) == -1) {
		free(body);
		snprintf(res->error, sizeof(res->error), "pipe: %s",
		    strerror(errno));
		return -1;
	}
	rc = run_request(body, &p[1], 1, p[1], p[0], run->timeout_ms,
	    run->output_cap > 0 ? run->output_cap : OUTPUT_CAP_DEFAULT,
	    run->cancel, res);
	close(p[0]);
	free(body);
	return rc;
}

/* An id for a message without a reply; 0 when no message should go. */
static uint32_t
notice_id(void)
{
	uint32_t id = 0;

	pthread_mutex_lock(&sb.lock);
	if (sb.available && !sb.dead && sb.isolation) {
		if (++sb.next_id == 0)
			sb.next_id = 1;
		id = sb.next_id;
	}
	pthread_mutex_unlock(&sb.lock);
	return id;
}

static void
send_notice(enum sbx_type type, uint32_t id, struct json_object *o)
{
	/*
	 * Ordered before any later SPAWN on the same socket. If the send
	 * fails the helper is gone, and nothing will run at all.
	 */
	if (send_locked(type, id, json_object_to_json_string_ext(o,
	    JSON_C_TO_STRING_PLAIN), NULL, 0) == -1)
		log_error("sandbox helper: %s: %s", sbx_type_name(type),
		    strerror(errno));
	json_object_put(o);
}

void
sandbox_forget(const char *conversation_id)
{
	struct json_object	*o;
	struct workspace	 ws;
	uint32_t		 id;

	if (workspace_paths(conversation_id, &ws) == -1 ||
	    (id = notice_id()) == 0)
		return;
	o = json_object_new_object();
	json_object_object_add(o, "upper", json_object_new_string(ws.upper));
	send_notice(SBX_FORGET, id, o);
}

void
sandbox_prepare(const char *conversation_id)
{
	struct json_object	*o;
	struct workspace	 ws;
	uint32_t		 id;

	if ((id = notice_id()) == 0 ||
	    workspace_ensure(conversation_id, &ws) == -1)
		return;		/* the command will say why, if one comes */
	(void)workspace_touch(&ws);
	o = json_object_new_object();
	json_object_object_add(o, "lower", json_object_new_string(ws.lower));
	json_object_object_add(o, "upper", json_object_new_string(ws.upper));
	json_object_object_add(o, "work", json_object_new_string(ws.work));
	json_object_object_add(o, "merged", json_object_new_string(ws.merged));
	send_notice(SBX_PREPARE, id, o);
}

int
sandbox_run_direct(const struct sandbox_direct *d, struct sandbox_result *res)
{
	char	*body;
	int	 fds[2] = { d->out_fd, d->err_fd }, rc;

	memset(res, 0, sizeof(*res));
	if (!sandbox_available(res->error, sizeof(res->error)))
		return -1;
	body = sbx_spawn_body(d->lower, d->upper, d->work, d->merged, d->argv,
	    NULL, 0, d->net, 0, d->timeout_ms);
	if (strlen(body) > SBX_BODY_MAX) {
		free(body);
		snprintf(res->error, sizeof(res->error), "the command is longer "
		    "than %d bytes", SBX_BODY_MAX);
		return -1;
	}
	rc = run_request(body, fds, 2, -1, -1, d->timeout_ms, 0, NULL, res);
	free(body);
	return rc;
}

void
sandbox_result_free(struct sandbox_result *res)
{
	free(res->output);
	res->output = NULL;
}
