/*
 * selftest.c — before it says hello, the helper proves that a sandbox can
 * be built here by building one: bwrap runs, the seccomp blob was read, the
 * workspace base takes a scratch workspace, a user namespace can be made,
 * overlayfs mounts in it, and the full shell profile runs `true`. Each step
 * is one line of `codumentor check`; the first failure is the reason the
 * server reports (fail closed). It does not retry or work around anything.
 */
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
#include <unistd.h>

#include "helper.h"
#include "rmtree.h"

#define TRIAL_TIMEOUT_MS	20000

enum { C_BWRAP, C_SECCOMP, C_BASE, C_USERNS, C_OVERLAY, C_SANDBOX, C_N };

static const char *const names[C_N] = {
	"bwrap", "seccomp", "workspace_base", "user_namespaces", "overlay",
	"sandbox",
};

/* The sentence a failed check becomes in sandbox_available(). */
static const char *const why[C_N] = {
	"bubblewrap is not available",
	"the seccomp filter cannot be loaded",
	"the workspace base is not usable",
	"user namespaces are unavailable",
	"overlayfs cannot be mounted in a user namespace",
	"bwrap cannot start a sandbox",
};

static void
set(struct check *ck, int ok, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
set(struct check *ck, int ok, const char *fmt, ...)
{
	va_list ap;

	ck->ok = ok;
	va_start(ap, fmt);
	vsnprintf(ck->detail, sizeof(ck->detail), fmt, ap);
	va_end(ap);
}

/* Wait for pid at most ms; SIGKILL it after that. The wait status, or -1. */
static int
wait_bounded(pid_t pid, int64_t ms)
{
	int64_t	end = helper_now_ms() + ms;
	int	st;
	pid_t	r;

	for (;;) {
		r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return st;
		if (r == -1 && errno != EINTR)
			return -1;
		if (helper_now_ms() > end) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
				;
			return -1;
		}
		poll(NULL, 0, 2);
	}
}

/* What a child wrote to a pipe, first line only, without the newline. */
static void
read_line(int fd, char *buf, size_t len)
{
	ssize_t	n;
	size_t	got = 0;
	char	*nl;

	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	while (got + 1 < len && (n = read(fd, buf + got, len - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	if ((nl = strchr(buf, '\n')) != NULL)
		*nl = '\0';
}

/* `bwrap --version`, which also shows that bwrap can be executed. */
static int
bwrap_version(const char *bwrap, char *out, size_t len)
{
	char	*argv[] = { "bwrap", "--version", NULL }, *envp[] = { NULL };
	int	 p[2], st;
	pid_t	 pid;

	if (pipe2(p, O_CLOEXEC) == -1)
		return -1;
	if ((pid = fork()) == -1) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(p[1], 1);
		execve(bwrap, argv, envp);
		_exit(127);
	}
	close(p[1]);
	st = wait_bounded(pid, TRIAL_TIMEOUT_MS);
	read_line(p[0], out, len);
	close(p[0]);
	return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static void
check_bwrap(const struct helper_conf *c, struct check *ck)
{
	char ver[128];

	if (strchr(c->bwrap, '/') == NULL) {
		set(ck, 0, "'%s' not found in PATH", c->bwrap);
		return;
	}
	if (access(c->bwrap, X_OK) == -1) {
		set(ck, 0, "%s: %s", c->bwrap, strerror(errno));
		return;
	}
	if (bwrap_version(c->bwrap, ver, sizeof(ver)) == -1) {
		set(ck, 0, "%s does not run (%s)", c->bwrap,
		    *ver ? ver : "no version output");
		return;
	}
	set(ck, 1, "%s (%s)", c->bwrap, ver);
}

/* A scratch workspace below the base: the trial's layers. */
static int
scratch_create(const struct helper_conf *c, char *dir, size_t len,
    struct check *ck)
{
	const char	*sub[] = { "lower", "upper", "work", "merged" };
	char		 p[SBX_PATH_MAX];
	size_t		 i;

	if (mkdir(c->base, 0700) == -1 && errno != EEXIST) {
		set(ck, 0, "%s: %s", c->base, strerror(errno));
		return -1;
	}
	snprintf(dir, len, "%s/.selftest-XXXXXX", c->base);
	if (mkdtemp(dir) == NULL) {
		set(ck, 0, "%s: cannot create a workspace there: %s", c->base,
		    strerror(errno));
		*dir = '\0';
		return -1;
	}
	for (i = 0; i < sizeof(sub) / sizeof(sub[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, sub[i]);
		if (mkdir(p, 0700) == -1) {
			set(ck, 0, "%s: %s", p, strerror(errno));
			return -1;
		}
	}
	set(ck, 1, "%s (writable)", c->base);
	return 0;
}

/* Run `true` in the full shell profile over the scratch workspace. */
static void
trial_run(const struct helper_conf *c, const char *dir, struct check *v)
{
	struct spawn_req	 r;
	struct spawned		 sp;
	char			 lower[SBX_PATH_MAX], upper[SBX_PATH_MAX];
	char			 work[SBX_PATH_MAX], merged[SBX_PATH_MAX];
	char			*argv[] = { "true", NULL }, *env[] = { NULL };
	char			 err[SBX_REASON_MAX], out[SBX_REASON_MAX];
	int			 p[2], st, started;

	snprintf(lower, sizeof(lower), "%s/lower", dir);
	snprintf(upper, sizeof(upper), "%s/upper", dir);
	snprintf(work, sizeof(work), "%s/work", dir);
	snprintf(merged, sizeof(merged), "%s/merged", dir);
	memset(&r, 0, sizeof(r));
	r.lower = lower;
	r.upper = upper;
	r.work = work;
	r.merged = merged;
	r.argv = argv;
	r.env = env;
	if (pipe2(p, O_CLOEXEC) == -1) {
		set(&v[C_USERNS], 0, "pipe: %s", strerror(errno));
		return;
	}
	r.out_fd = r.err_fd = p[1];
	if (spawn_start(c, &r, NULL, &sp, err, sizeof(err)) == -1) {
		close(p[0]);
		close(p[1]);
		if (strncmp(err, "userns:", 7) == 0)
			set(&v[C_USERNS], 0, "%s", err + 8);
		else if (strncmp(err, "overlay:", 8) == 0) {
			set(&v[C_USERNS], 1, "usable");
			set(&v[C_OVERLAY], 0, "%s", err + 9);
		} else {
			set(&v[C_USERNS], 1, "usable");
			set(&v[C_OVERLAY], 1, "lowerdir+upperdir, userxattr");
			set(&v[C_SANDBOX], 0, "%s", err);
		}
		return;
	}
	close(p[1]);
	set(&v[C_USERNS], 1, "usable");
	set(&v[C_OVERLAY], 1, "lowerdir+upperdir, userxattr");
	st = wait_bounded(sp.pid, TRIAL_TIMEOUT_MS);
	started = spawn_status_started(sp.status_fd);
	close(sp.status_fd);
	read_line(p[0], out, sizeof(out));
	close(p[0]);
	if (st == -1)
		set(&v[C_SANDBOX], 0, "a trial run of `true` did not finish "
		    "in %d s", TRIAL_TIMEOUT_MS / 1000);
	else if (!started || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		set(&v[C_SANDBOX], 0, "a trial run of `true` failed (status "
		    "%d)%s%s", WIFEXITED(st) ? WEXITSTATUS(st) : 128 +
		    WTERMSIG(st), *out ? ": " : "", out);
	else
		set(&v[C_SANDBOX], 1, "a trial run of `true` succeeded");
}

size_t
selftest_run(const struct helper_conf *c, struct check *v, char *reason,
    size_t len)
{
	char	dir[SBX_PATH_MAX] = "";
	int	i;

	for (i = 0; i < C_N; i++) {
		v[i].name = names[i];
		set(&v[i], -1, "not tested");
	}
	*reason = '\0';
	if (!c->isolation) {
		v[0].name = "isolation";
		set(&v[0], 1, "disabled in the configuration: commands run "
		    "on the host, gated only by approval");
		scratch_create(c, dir, sizeof(dir), &v[1]);
		v[1].name = names[C_BASE];
		if (v[1].ok == 0)
			snprintf(reason, len, "%s: %s", why[C_BASE], v[1].detail);
		if (*dir)
			rmtree_at(AT_FDCWD, dir, 0, NULL);
		return 2;
	}
	check_bwrap(c, &v[C_BWRAP]);
	if (strcmp(c->seccomp_mode, "off") == 0)
		set(&v[C_SECCOMP], 1, "sandbox.seccomp is off: no system-call "
		    "filter");
	else if (c->seccomp == NULL)
		set(&v[C_SECCOMP], 0, "%s: %s (set sandbox.seccomp: off to run "
		    "without a filter)", c->seccomp_path ? c->seccomp_path :
		    "(no path)", c->seccomp_error ? c->seccomp_error : "not loaded");
	else
		set(&v[C_SECCOMP], 1, "%s (%s, %zu instructions)",
		    c->seccomp_path, c->seccomp_mode, c->seccomp_len / 8);
	if (scratch_create(c, dir, sizeof(dir), &v[C_BASE]) == 0 &&
	    v[C_BWRAP].ok == 1 && v[C_SECCOMP].ok == 1)
		trial_run(c, dir, v);
	if (*dir)
		rmtree_at(AT_FDCWD, dir, 0, NULL);
	for (i = 0; i < C_N; i++)
		if (v[i].ok == 0) {
			snprintf(reason, len, "%s: %s", why[i], v[i].detail);
			break;
		}
	return C_N;
}
