/*
 * sandbox_client.c — the server's side of codumentor-sandbox (sandbox.h,
 * sandbox/proto.h). sandbox_start() forks and execs the helper once, before
 * the server has threads, and reads its HELLO; after that this process never
 * forks or execs again: every command is a SPAWN request.
 *
 * Many turns run commands at once: sends are serialised by a mutex, each
 * request has an id, and one reader thread routes the helper's replies to
 * the waiting callers (sandbox_run.c sends the requests and waits). If the
 * helper dies, isolation becomes unavailable for good (the server cannot
 * fork to restart it) and every caller fails closed. It does not build
 * sandboxes or judge requests; the helper does.
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
#include "sandbox_client.h"
#include "sandbox_setup.h"
#include "util.h"

#define HELLO_TIMEOUT_MS	60000	/* the self-test builds one sandbox */
#define PASSENV_MAX		32
#define SOCK_BUF		(512 * 1024)

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

static uint32_t
next_id_locked(void)
{
	if (++sb.next_id == 0)
		sb.next_id = 1;
	return sb.next_id;
}

int
sbx_waiter_add(struct waiter *w, char *err, size_t len)
{
	pthread_mutex_lock(&sb.lock);
	if (!sb.available || sb.dead) {
		snprintf(err, len, "%s", sb.reason);
		pthread_mutex_unlock(&sb.lock);
		return -1;
	}
	w->id = next_id_locked();
	w->next = sb.waiters;
	sb.waiters = w;
	pthread_mutex_unlock(&sb.lock);
	return 0;
}

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

void
sbx_waiter_remove(struct waiter *w)
{
	pthread_mutex_lock(&sb.lock);
	waiter_remove(w);
	pthread_mutex_unlock(&sb.lock);
}

int
sbx_waiter_done(struct waiter *w, int force)
{
	int done;

	pthread_mutex_lock(&sb.lock);
	done = force || w->refused || w->dead || w->exited;
	if (done)
		waiter_remove(w);
	pthread_mutex_unlock(&sb.lock);
	return done;
}

int
sbx_send_locked(enum sbx_type type, uint32_t id, const char *body,
    const int *fds, int nfds)
{
	int rc;

	pthread_mutex_lock(&sb.send_lock);
	rc = sbx_send(sb.sock, type, id, body, fds, nfds);
	pthread_mutex_unlock(&sb.send_lock);
	return rc;
}

uint32_t
sbx_notice_id(void)
{
	uint32_t id = 0;

	pthread_mutex_lock(&sb.lock);
	if (sb.available && !sb.dead && sb.isolation)
		id = next_id_locked();
	pthread_mutex_unlock(&sb.lock);
	return id;
}
