/*
 * spawn.c — the `shell` profile: build bwrap's argument list from fixed data
 * plus a validated request's few parameters (request.c), and start it on
 * the workspace's overlay: joined where the helper holds one (hold.c),
 * otherwise mounted in a fresh user+mount namespace.
 *
 * bwrap gets an empty environment and its options through `--args 3` (a
 * memfd), so neither /proc/1/environ nor /proc/1/cmdline inside the sandbox
 * shows host paths or variables. The server cannot pass bwrap options: it
 * names paths and a command, and this file decides everything else. It does
 * not reap children or watch timeouts; helper.c does.
 */
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>
#include <linux/magic.h>

#include "helper.h"

/* The environment every sandboxed command starts with (seed: minimal). */
static const char *const base_env[][2] = {
	{ "PATH", "/usr/local/bin:/usr/bin:/bin" },
	{ "HOME", "/tmp" },
	{ "LANG", "C.UTF-8" },
	{ "TERM", "dumb" },
};

/*
 * The part of /etc a command needs to run programs, resolve users and
 * hosts, and check certificates. Not /etc as a whole: it holds shadow, ssh
 * host keys, TLS keys and the service's own configuration. Kept short on
 * purpose: each directory entry is a bind mount, and mounts are most of a
 * sandbox's start-up time (doc/performance.md "Sandbox spawn"); a regular
 * file is copied instead (args_etc).
 */
static const char *const etc_files[] = {
	"/etc/ld.so.cache", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf",
	"/etc/hosts", "/etc/resolv.conf", "/etc/localtime", "/etc/os-release",
	"/etc/debian_version", "/etc/alternatives", "/etc/ssl/certs",
	"/etc/ssl/openssl.cnf",
};

/* Top-level directories that are /usr's on a merged-/usr system. */
static const char *const usr_links[] = {
	"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
};

#define ETC_FILES	(sizeof(etc_files) / sizeof(etc_files[0]))
#define ETC_COPY_MAX	(1024 * 1024)	/* bigger files are bound instead */

/* bwrap's descriptors in the child; FD_ETC.. are the copied /etc files. */
enum { FD_ARGS = 3, FD_SECCOMP = 4, FD_STATUS = 5, FD_ETC = 6 };
#define CHILD_FDS	(FD_ETC + ETC_FILES)

struct argbuf {
	char	*p;
	size_t	 len, cap;
};

static void
arg(struct argbuf *b, const char *s)
{
	size_t n = strlen(s) + 1;

	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2;
		if ((b->p = realloc(b->p, b->cap)) == NULL)
			abort();
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static void
args(struct argbuf *b, int n, ...)
{
	va_list ap;

	va_start(ap, n);
	while (n-- > 0)
		arg(b, va_arg(ap, const char *));
	va_end(ap);
}

/* --symlink or --ro-bind for the top-level /usr aliases, as on the host. */
static void
args_usr_links(struct argbuf *b)
{
	struct stat	 st;
	char		 target[256];
	ssize_t		 n;
	size_t		 i;

	for (i = 0; i < sizeof(usr_links) / sizeof(usr_links[0]); i++) {
		if (lstat(usr_links[i], &st) == -1)
			continue;
		if (S_ISLNK(st.st_mode)) {
			n = readlink(usr_links[i], target, sizeof(target) - 1);
			if (n <= 0)
				continue;
			target[n] = '\0';
			args(b, 3, "--symlink", target, usr_links[i]);
		} else if (S_ISDIR(st.st_mode))
			args(b, 3, "--ro-bind", usr_links[i], usr_links[i]);
	}
}

/*
 * The /etc allowlist. An entry that is a symlink into /usr (localtime,
 * os-release on Debian) is recreated as the same symlink, which costs no
 * mount. A regular file (or a symlink to one) is opened here and bwrap
 * copies it (--file) into the sandbox's root, which --remount-ro makes
 * read-only like a bind: the same bytes, read now, without the bind and
 * remount pair (two mount calls and a parse of mountinfo each, about a
 * tenth of a millisecond per file). Directories, and whatever cannot be
 * opened, are bound read-only as before. fds[i] gets the descriptor for
 * etc_files[i] (bwrap's FD_ETC + i), or -1.
 */
static void
args_etc(struct argbuf *b, int *fds)
{
	struct stat	 st;
	char		 target[256], fdnum[16], mode[16];
	ssize_t		 n;
	size_t		 i;

	for (i = 0; i < ETC_FILES; i++) {
		fds[i] = -1;
		if (lstat(etc_files[i], &st) == -1)
			continue;
		if (S_ISLNK(st.st_mode) &&
		    (n = readlink(etc_files[i], target, sizeof(target) - 1)) > 0) {
			target[n] = '\0';
			if (strncmp(target, "/usr/", 5) == 0 ||
			    strncmp(target, "../usr/", 7) == 0) {
				args(b, 3, "--symlink", target, etc_files[i]);
				continue;
			}
		}
		/* O_NONBLOCK: a FIFO put there must not stall the helper. */
		fds[i] = open(etc_files[i], O_RDONLY | O_CLOEXEC | O_NOCTTY |
		    O_NONBLOCK);
		if (fds[i] >= 0 && fstat(fds[i], &st) == 0 &&
		    S_ISREG(st.st_mode) && st.st_size <= ETC_COPY_MAX) {
			snprintf(fdnum, sizeof(fdnum), "%d", FD_ETC + (int)i);
			snprintf(mode, sizeof(mode), "0%o",
			    (unsigned)(st.st_mode & 0777));
			args(b, 5, "--perms", mode, "--file", fdnum,
			    etc_files[i]);
			continue;
		}
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
		args(b, 3, "--ro-bind", etc_files[i], etc_files[i]);
	}
}

/* The whole bwrap option list of the shell profile, NUL-separated. */
static void
shell_profile(const struct helper_conf *c, const struct spawn_req *r,
    struct argbuf *b, int *etc_fds)
{
	char	**e, name[SBX_ENV_NAME_MAX + 1], *eq;
	size_t	  i;

	args(b, 1, "--unshare-all");
	if (r->net)
		args(b, 1, "--share-net");
	args(b, 9, "--unshare-user", "--disable-userns", "--cap-drop", "ALL",
	    "--new-session", "--die-with-parent", "--hostname", "sandbox",
	    "--clearenv");
	for (i = 0; i < sizeof(base_env) / sizeof(base_env[0]); i++)
		args(b, 3, "--setenv", base_env[i][0], base_env[i][1]);
	/* Operator-listed variables, then the run's own: later ones win. */
	for (e = c->passenv; e != NULL && *e != NULL; e++) {
		if ((eq = strchr(*e, '=')) == NULL ||
		    (size_t)(eq - *e) > SBX_ENV_NAME_MAX)
			continue;
		memcpy(name, *e, (size_t)(eq - *e));
		name[eq - *e] = '\0';
		args(b, 3, "--setenv", name, eq + 1);
	}
	for (e = r->env; e != NULL && *e != NULL; e++) {
		eq = strchr(*e, '=');
		memcpy(name, *e, (size_t)(eq - *e));
		name[eq - *e] = '\0';
		args(b, 3, "--setenv", name, eq + 1);
	}
	args(b, 3, "--ro-bind", "/usr", "/usr");
	args_usr_links(b);
	args_etc(b, etc_fds);
	args(b, 6, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp");
	args(b, 5, "--dir", "/var", "--symlink", "../tmp", "/var/tmp");
	args(b, 3, "--bind", r->merged, "/workspace");
	args(b, 2, "--chdir", "/workspace");
	if (c->seccomp != NULL)
		args(b, 2, "--seccomp", "4");
	args(b, 2, "--json-status-fd", "5");
	/* The rest of the root (a tmpfs of bwrap's) is read-only. */
	args(b, 2, "--remount-ro", "/");
}

/* A memfd holding len bytes of data, positioned at its start; -1. */
static int
memfd_with(const char *name, const void *data, size_t len)
{
	const char	*p = data;
	ssize_t		 n;
	int		 fd;

	if ((fd = memfd_create(name, MFD_CLOEXEC)) == -1)
		return -1;
	while (len > 0) {
		if ((n = write(fd, p, len)) == -1) {
			if (errno == EINTR)
				continue;
			close(fd);
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	if (lseek(fd, 0, SEEK_SET) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

/* In the child: tell the parent which step failed (an ERROR), and die. */
static void __attribute__((noreturn))
child_fail(int errfd, const char *step, int e)
{
	struct json_object	*o = json_object_new_object();
	char			 msg[SBX_REASON_MAX];

	snprintf(msg, sizeof(msg), "%s: %s", step, strerror(e));
	json_object_object_add(o, "message", json_object_new_string(msg));
	(void)sbx_send(errfd, SBX_ERROR, 0, json_object_to_json_string_ext(o,
	    JSON_C_TO_STRING_PLAIN), NULL, 0);
	_exit(127);
}

static int
write_file(const char *path, const char *text)
{
	size_t	len = strlen(text);
	int	fd, rc;

	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
		return -1;
	rc = write(fd, text, len) == (ssize_t)len ? 0 : -1;
	close(fd);
	return rc;
}

/*
 * Hand this process's user and mount namespaces (the overlay just mounted)
 * to the helper, which keeps them for the workspace's next command
 * (hold.c). Best effort: if it fails, the run goes on and nothing is held.
 */
static void
child_send_ns(int sock)
{
	int fds[2];

	fds[0] = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
	fds[1] = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	if (fds[0] >= 0 && fds[1] >= 0)
		(void)sbx_send(sock, SBX_NS, 0, NULL, fds, 2);
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
}

/*
 * Enter the held overlay of the workspace instead of mounting one. If
 * merged/ is no longer an overlay there (its mount was detached because
 * the directory was removed on the host), bwrap would bind the plain
 * directory: refuse, and the helper mounts afresh.
 */
static void
child_join(const struct spawn_req *r, const struct ns_pair *join, int errfd)
{
	struct statfs	sf;

	if (setns(join->user, CLONE_NEWUSER) == -1)
		child_fail(errfd, "hold: setns user", errno);
	if (setns(join->mnt, CLONE_NEWNS) == -1)
		child_fail(errfd, "hold: setns mnt", errno);
	if (statfs(r->merged, &sf) == -1)
		child_fail(errfd, "hold: merged", errno);
	if (sf.f_type != OVERLAYFS_SUPER_MAGIC)
		child_fail(errfd, "hold: merged is no longer an overlay", ESTALE);
}

/*
 * A user namespace in which this process keeps its own uid and gid (so
 * files in the upper layer belong to the service user) and holds the
 * capabilities to mount, then a private mount namespace with the overlay.
 */
static void
child_overlay(const struct helper_conf *c, const struct spawn_req *r, int errfd)
{
	char	map[64], *opts;
	size_t	len;

	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) == -1)
		child_fail(errfd, "userns: unshare", errno);
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)c->uid,
	    (unsigned)c->uid);
	if (write_file("/proc/self/uid_map", map) == -1)
		child_fail(errfd, "userns: uid_map", errno);
	if (write_file("/proc/self/setgroups", "deny") == -1 && errno != ENOENT)
		child_fail(errfd, "userns: setgroups", errno);
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)c->gid,
	    (unsigned)c->gid);
	if (write_file("/proc/self/gid_map", map) == -1)
		child_fail(errfd, "userns: gid_map", errno);
	/*
	 * No MS_PRIVATE remount of /: a mount namespace made together with a
	 * user namespace turns shared mounts into slaves, so the overlay never
	 * propagates to the host, and the remount would walk every mount.
	 */
	len = strlen(r->lower) + strlen(r->upper) + strlen(r->work) + 64;
	if ((opts = malloc(len)) == NULL)
		child_fail(errfd, "overlay: options", ENOMEM);
	/* userxattr: overlayfs in a user namespace keeps its metadata in user.* */
	snprintf(opts, len, "lowerdir=%s,upperdir=%s,workdir=%s,userxattr",
	    r->lower, r->upper, r->work);
	if (mount("overlay", r->merged, "overlay", MS_NOSUID | MS_NODEV,
	    opts) == -1)
		child_fail(errfd, "overlay: mount", errno);
	free(opts);
	if (r->hold)
		child_send_ns(errfd);
}

/*
 * Put each source descriptor on its target number. Sources are first moved
 * above every target so that no dup2 clobbers a source not yet placed.
 */
static void
child_fds(const int *src, const int *dst, int n, int errfd)
{
	int moved[CHILD_FDS], i;

	for (i = 0; i < n; i++)
		if (src[i] >= 0 &&
		    (moved[i] = fcntl(src[i], F_DUPFD_CLOEXEC, CHILD_FDS)) == -1)
			child_fail(errfd, "exec: descriptors", errno);
	for (i = 0; i < n; i++)
		if (src[i] >= 0 && dup2(moved[i], dst[i]) == -1)
			child_fail(errfd, "exec: descriptors", errno);
}

static void __attribute__((noreturn))
child_main(const struct helper_conf *c, const struct spawn_req *r,
    const struct ns_pair *join, pid_t parent, int errfd, int args_fd,
    int seccomp_fd, int status_fd, const int *etc_fds, char *const *argv,
    char **envp)
{
	extern char	**environ;
	sigset_t	  all;
	int		  src[CHILD_FDS], dst[CHILD_FDS];
	int		  null;
	size_t		  i;

	/* Dies with the helper; and if the helper is already gone, now. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	signal(SIGPIPE, SIG_DFL);
	/* The server's 077 would make bwrap's /etc and /var unreadable. */
	umask(022);
	if (c->isolation && join != NULL)
		child_join(r, join, errfd);
	else if (c->isolation)
		child_overlay(c, r, errfd);
	else {
		/* Host-direct: its own session, so a kill reaches its group. */
		if (setsid() == -1)
			child_fail(errfd, "exec: setsid", errno);
		if (chdir(r->upper) == -1)
			child_fail(errfd, "exec: chdir", errno);
	}
	if ((null = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1)
		child_fail(errfd, "exec: /dev/null", errno);
	src[0] = null;
	src[1] = r->out_fd;
	src[2] = r->err_fd;
	src[3] = args_fd;
	src[4] = seccomp_fd;
	src[5] = status_fd;
	for (i = 0; i < CHILD_FDS; i++)
		dst[i] = (int)i;
	for (i = 0; i < ETC_FILES; i++)
		src[FD_ETC + i] = etc_fds[i];
	child_fds(src, dst, CHILD_FDS, errfd);
	/*
	 * Everything above bwrap's descriptors is already close-on-exec (the
	 * held namespaces of other workspaces among them); say it once more
	 * so that no descriptor added later can leak into a sandbox.
	 */
	(void)close_range(CHILD_FDS, ~0U, CLOSE_RANGE_CLOEXEC);
	if (c->isolation)
		execve(c->bwrap, argv, envp);
	else {
		environ = envp;
		execvp(argv[0], argv);
	}
	child_fail(errfd, "exec", errno);
}

/* envp for host-direct runs: the same minimal list the sandbox gets. */
static char **
host_env(const struct helper_conf *c, const struct spawn_req *r)
{
	size_t	  n = 0, i, k = 0;
	char	**v, **e;

	for (e = c->passenv; e != NULL && *e != NULL; e++)
		n++;
	for (e = r->env; e != NULL && *e != NULL; e++)
		n++;
	n += sizeof(base_env) / sizeof(base_env[0]);
	if ((v = calloc(n + 1, sizeof(char *))) == NULL)
		abort();
	for (i = 0; i < sizeof(base_env) / sizeof(base_env[0]); i++) {
		size_t l = strlen(base_env[i][0]) + strlen(base_env[i][1]) + 2;

		if ((v[k] = malloc(l)) == NULL)
			abort();
		snprintf(v[k++], l, "%s=%s", base_env[i][0], base_env[i][1]);
	}
	for (e = c->passenv; e != NULL && *e != NULL; e++)
		v[k++] = helper_strdup(*e);
	for (e = r->env; e != NULL && *e != NULL; e++)
		v[k++] = helper_strdup(*e);
	return v;
}

static void
strv_free(char **v)
{
	char **p;

	if (v == NULL)
		return;
	for (p = v; *p != NULL; p++)
		free(*p);
	free(v);
}

/*
 * What the child said before its exec, over the setup socket (close-on-exec,
 * so EOF means the exec happened, or the child of spawn_prepare exited):
 * its namespaces (SBX_NS, kept in ns when ns is not NULL) and what failed
 * (SBX_ERROR). 0 at EOF without a failure; -1 with err.
 */
static int
child_report(int sock, struct ns_pair *ns, char *err, size_t len)
{
	static struct sbx_msg	 m;	/* large; the helper has one thread */
	struct json_object	*o, *v;
	int			 rc;

	for (;;) {
		if ((rc = sbx_recv(sock, &m)) == 0)
			return 0;
		if (rc == -1)
			return helper_fail(err, len, "exec: from the child: %s",
			    strerror(errno));
		if (m.hdr.type == SBX_NS && m.nfds == 2 && ns != NULL &&
		    ns->user < 0) {
			ns->user = m.fds[0];
			ns->mnt = m.fds[1];
			continue;
		}
		sbx_msg_close_fds(&m);
		if (m.hdr.type != SBX_ERROR)
			return helper_fail(err, len, "exec: the child sent %s",
			    sbx_type_name(m.hdr.type));
		o = json_tokener_parse(m.body);
		helper_fail(err, len, "%s", o != NULL &&
		    json_object_object_get_ex(o, "message", &v) ?
		    json_object_get_string(v) : "the child failed");
		json_object_put(o);
		return -1;
	}
}

int
spawn_start(const struct helper_conf *c, const struct spawn_req *r,
    const struct ns_pair *join, struct spawned *out, char *err, size_t len)
{
	struct argbuf	  b = { 0 };
	char		**argv = NULL, **envp = NULL;
	char		 *empty_env[1] = { NULL };
	int		  ep[2] = { -1, -1 }, sp[2] = { -1, -1 };
	int		  args_fd = -1, seccomp_fd = -1, rc = -1, st;
	int		  etc_fds[ETC_FILES];
	size_t		  n, i;
	pid_t		  pid, parent = getpid();

	for (i = 0; i < ETC_FILES; i++)
		etc_fds[i] = -1;
	out->pid = -1;
	out->status_fd = -1;
	out->ns.user = out->ns.mnt = -1;
	for (n = 0; r->argv[n] != NULL; n++)
		;
	if ((argv = calloc(n + 5, sizeof(char *))) == NULL)
		abort();
	if (c->isolation) {
		if (access(c->bwrap, X_OK) == -1) {
			helper_fail(err, len, "exec: bwrap %s: %s", c->bwrap,
			    strerror(errno));
			goto out;
		}
		shell_profile(c, r, &b, etc_fds);
		if ((args_fd = memfd_with("bwrap-args", b.p, b.len)) == -1 ||
		    (c->seccomp != NULL && (seccomp_fd = memfd_with("seccomp",
		    c->seccomp, c->seccomp_len)) == -1) ||
		    pipe2(sp, O_CLOEXEC) == -1) {
			helper_fail(err, len, "exec: %s", strerror(errno));
			goto out;
		}
		argv[0] = "bwrap";
		argv[1] = "--args";
		argv[2] = "3";
		argv[3] = "--";
		for (i = 0; i < n; i++)
			argv[4 + i] = r->argv[i];
		envp = empty_env;
	} else {
		for (i = 0; i < n; i++)
			argv[i] = r->argv[i];
		envp = host_env(c, r);
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ep) == -1) {
		helper_fail(err, len, "exec: socketpair: %s", strerror(errno));
		goto out;
	}
	if ((pid = fork()) == -1) {
		helper_fail(err, len, "exec: fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0)
		child_main(c, r, join, parent, ep[1], args_fd, seccomp_fd,
		    sp[1], etc_fds, argv, envp);
	close(ep[1]);
	ep[1] = -1;
	if (child_report(ep[0], &out->ns, err, len) == -1) {
		kill(pid, SIGKILL);	/* not reaped yet: still ours */
		while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
			;
		goto out;
	}
	out->pid = pid;
	out->status_fd = sp[0];
	sp[0] = -1;
	rc = 0;
out:
	if (rc == -1 && out->ns.user >= 0) {
		close(out->ns.user);
		close(out->ns.mnt);
		out->ns.user = out->ns.mnt = -1;
	}
	if (ep[0] >= 0)
		close(ep[0]);
	if (ep[1] >= 0)
		close(ep[1]);
	if (sp[0] >= 0)
		close(sp[0]);
	if (sp[1] >= 0)
		close(sp[1]);
	if (args_fd >= 0)
		close(args_fd);
	if (seccomp_fd >= 0)
		close(seccomp_fd);
	for (i = 0; i < ETC_FILES; i++)
		if (etc_fds[i] >= 0)
			close(etc_fds[i]);
	free(b.p);
	free(argv);
	if (envp != empty_env)
		strv_free(envp);
	return rc;
}

int
spawn_prepare(const struct helper_conf *c, const struct spawn_req *r,
    struct ns_pair *ns, char *err, size_t len)
{
	struct spawn_req	 q = *r;
	pid_t			 pid, parent = getpid();
	int			 sv[2], st, rc;

	ns->user = ns->mnt = -1;
	q.hold = 1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1)
		return helper_fail(err, len, "socketpair: %s", strerror(errno));
	if ((pid = fork()) == -1) {
		close(sv[0]);
		close(sv[1]);
		return helper_fail(err, len, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		close(sv[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		umask(022);
		child_overlay(c, &q, sv[1]);	/* sends the namespaces */
		_exit(0);
	}
	close(sv[1]);
	rc = child_report(sv[0], ns, err, len);
	close(sv[0]);
	while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
		;
	if (rc == 0 && ns->user >= 0)
		return 0;
	if (ns->user >= 0) {
		close(ns->user);
		close(ns->mnt);
		ns->user = ns->mnt = -1;
	}
	return rc == -1 ? -1 : helper_fail(err, len, "the namespaces did not "
	    "come back");
}

int
spawn_status_started(int status_fd)
{
	char	buf[4096];
	size_t	len = 0;
	ssize_t	n;
	int	fl;

	if (status_fd < 0)
		return 1;	/* host-direct: exec succeeded, so it started */
	fl = fcntl(status_fd, F_GETFL);
	fcntl(status_fd, F_SETFL, fl | O_NONBLOCK);
	while (len < sizeof(buf) - 1 &&
	    (n = read(status_fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	return strstr(buf, "\"child-pid\"") != NULL;
}
