/*
 * selfguard.c — the resident server takes away its own ability to start
 * programs: a hand-written classic BPF seccomp filter (no libseccomp at run
 * time) refusing execve, execveat and every process creation but a thread,
 * and a Landlock domain limiting its filesystem view. Both are inherited by
 * every thread created afterwards, which is why cmd_api installs them just
 * before the worker threads. It does not confine the sandbox helper, which
 * was started earlier and is the one place that creates processes.
 */
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/sched.h>
#include <linux/seccomp.h>

#include "app.h"
#include "log.h"
#include "selfguard.h"
#include "util.h"

#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER	(1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE	(1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV	(1ULL << 15)
#endif

#if defined(__x86_64__)
#define SG_AUDIT_ARCH	AUDIT_ARCH_X86_64
#define SG_ARCH_NAME	"x86_64"
#elif defined(__aarch64__)
#define SG_AUDIT_ARCH	AUDIT_ARCH_AARCH64
#define SG_ARCH_NAME	"aarch64"
#endif

/*
 * LeakSanitizer stops the world from a tracer it starts with exactly these
 * clone flags; sanitizer builds (tests only) let that one call through.
 */
#if defined(__SANITIZE_ADDRESS__)
#define SG_LSAN_CLONE	(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_UNTRACED)
#endif

#define ERRNO(e)	(SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))
#define ARG0_LO		(offsetof(struct seccomp_data, args[0]))

#ifdef SG_AUDIT_ARCH
/*
 * The policy, readable in one screen. Everything not named is allowed: the
 * point is to remove exactly the primitives an attacker inside the server
 * would need to start a program, not to sandbox the server's own work.
 */
static struct sock_filter filter[] = {
	/* A foreign ABI (i386 via int 0x80 on x86_64) is never ours. */
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SG_AUDIT_ARCH, 1, 0),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#if defined(__x86_64__)
	/* x32 numbers alias the native ones with bit 30 set: refuse them all. */
	BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, ERRNO(EPERM)),
#endif
	/* Starting a program. */
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_execve, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, ERRNO(EPERM)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_execveat, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, ERRNO(EPERM)),
#ifdef __NR_fork
	/* Creating a process. */
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_fork, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, ERRNO(EPERM)),
#endif
#ifdef __NR_vfork
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_vfork, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, ERRNO(EPERM)),
#endif
	/*
	 * clone3 passes its flags in memory a filter cannot read; ENOSYS
	 * makes glibc fall back to clone, whose flags it can.
	 */
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, ERRNO(ENOSYS)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 1, 0),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	/* clone: a thread (CLONE_THREAD) is fine, anything else is a process. */
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_LO),
#ifdef SG_LSAN_CLONE
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SG_LSAN_CLONE, 3, 0),
#endif
	BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	BPF_STMT(BPF_RET | BPF_K, ERRNO(EPERM)),
#ifdef SG_LSAN_CLONE
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
#endif
};
#endif

const char *
selfguard_arch(void)
{
#ifdef SG_ARCH_NAME
	return SG_ARCH_NAME;
#else
	return NULL;
#endif
}

/* Threads of this process, from /proc/self/status; -1 if unknown. */
static int
thread_count(void)
{
	FILE	*f = fopen("/proc/self/status", "re");
	char	 line[256];
	int	 n = -1;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	fclose(f);
	return n;
}

static int
seccomp_install(char *err, size_t errlen)
{
#ifdef SG_AUDIT_ARCH
	struct sock_fprog prog = {
		.len = (unsigned short)(sizeof(filter) / sizeof(filter[0])),
		.filter = filter,
	};

	/* TSYNC too: should a library have started a thread, it is covered. */
	if (syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER,
	    SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0) {
		snprintf(err, errlen, "cannot install the no-exec seccomp "
		    "filter: %s; set security.no_exec: false to run without it",
		    strerror(errno));
		return -1;
	}
	return 0;
#else
	snprintf(err, errlen, "the no-exec seccomp filter is not built for this "
	    "architecture; set security.no_exec: false to run without it");
	return -1;
#endif
}

int
selfguard_landlock_abi(void)
{
	int abi;

	abi = (int)syscall(__NR_landlock_create_ruleset, NULL, 0,
	    LANDLOCK_CREATE_RULESET_VERSION);
	return abi < 0 ? 0 : abi;
}

/* The access rights this ABI knows: the ones the domain handles. */
static uint64_t
fs_handled(int abi)
{
	uint64_t a = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1;	/* ABI 1 */

	if (abi >= 2)
		a |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		a |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		a |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return a;
}

#define FS_RO	(LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define FS_RW	(FS_RO | LANDLOCK_ACCESS_FS_WRITE_FILE | \
		 LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE | \
		 LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG | \
		 LANDLOCK_ACCESS_FS_REFER | LANDLOCK_ACCESS_FS_TRUNCATE)
#define FS_DEV	(LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
		 LANDLOCK_ACCESS_FS_IOCTL_DEV)
#define FS_FILE	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
		 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | \
		 LANDLOCK_ACCESS_FS_IOCTL_DEV)

/*
 * Allow ACCESS beneath PATH. A path that does not exist is skipped (not
 * every system has /lib64). EXECUTE is never granted: nothing here runs.
 */
static int
rule_add(int ruleset, const char *path, uint64_t access, uint64_t handled,
    char *err, size_t errlen)
{
	struct landlock_path_beneath_attr	 pb;
	struct stat				 st;
	int					 fd;

	if ((fd = open(path, O_PATH | O_CLOEXEC)) == -1) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		snprintf(err, errlen, "Landlock: %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
		access &= FS_FILE;
	memset(&pb, 0, sizeof(pb));
	pb.parent_fd = fd;
	pb.allowed_access = access & handled;
	if (pb.allowed_access != 0 && syscall(__NR_landlock_add_rule, ruleset,
	    LANDLOCK_RULE_PATH_BENEATH, &pb, 0) != 0) {
		snprintf(err, errlen, "Landlock rule for %s: %s", path,
		    strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/* The directory part of PATH into buf ("." when there is none). */
static void
dir_of(const char *path, char *buf, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL)
		strlcpy_(buf, ".", len);
	else if (slash == path)
		strlcpy_(buf, "/", len);
	else
		snprintf(buf, len, "%.*s", (int)(slash - path), path);
}

static int
landlock_install(const char *socket_path, int abi, char *err, size_t errlen)
{
	static const char *const ro[] = {
		"/usr", "/lib", "/lib64", "/lib32", "/libx32", "/etc",
		"/proc/self", "/sys/devices/system/cpu",
	};
	struct landlock_ruleset_attr	 attr;
	uint64_t			 handled = fs_handled(abi);
	char				 dir[PATH_MAX], exe[PATH_MAX];
	ssize_t				 n;
	size_t				 i;
	int				 rs, rc = -1;

	memset(&attr, 0, sizeof(attr));
	attr.handled_access_fs = handled;
	if ((rs = (int)syscall(__NR_landlock_create_ruleset, &attr,
	    sizeof(attr), 0)) == -1) {
		snprintf(err, errlen, "Landlock: cannot create a ruleset: %s",
		    strerror(errno));
		return -1;
	}
	for (i = 0; i < sizeof(ro) / sizeof(ro[0]); i++)
		if (rule_add(rs, ro[i], FS_RO, handled, err, errlen) == -1)
			goto out;
	if (rule_add(rs, "/dev/null", FS_DEV, handled, err, errlen) == -1 ||
	    rule_add(rs, "/dev/urandom", FS_RO, handled, err, errlen) == -1 ||
	    rule_add(rs, "/dev/random", FS_RO, handled, err, errlen) == -1 ||
	    rule_add(rs, "/dev/ptmx", FS_DEV, handled, err, errlen) == -1 ||
	    rule_add(rs, "/dev/pts", FS_DEV, handled, err, errlen) == -1)
		goto out;
	/* The program's own directory: the sandbox blobs may live beside it. */
	if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) > 0) {
		exe[n] = '\0';
		dir_of(exe, dir, sizeof(dir));
		if (rule_add(rs, dir, FS_RO, handled, err, errlen) == -1)
			goto out;
	}
	if (app.cfg.path != NULL &&
	    rule_add(rs, app.cfg.path, FS_RO, handled, err, errlen) == -1)
		goto out;
	if (rule_add(rs, app.cfg.instance_dir, FS_RW, handled, err,
	    errlen) == -1 || rule_add(rs, app.cfg.workspace_isolation.base_dir,
	    FS_RW, handled, err, errlen) == -1)
		goto out;
	/* The log may live outside the instance; reopening creates the file. */
	dir_of(app.cfg.log.file, dir, sizeof(dir));
	if (rule_add(rs, dir, FS_RW, handled, err, errlen) == -1)
		goto out;
	if (socket_path != NULL) {
		dir_of(socket_path, dir, sizeof(dir));
		if (rule_add(rs, dir, LANDLOCK_ACCESS_FS_REMOVE_FILE, handled,
		    err, errlen) == -1)
			goto out;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    syscall(__NR_landlock_restrict_self, rs, 0) != 0) {
		snprintf(err, errlen, "Landlock: cannot restrict the server: %s",
		    strerror(errno));
		goto out;
	}
	rc = 0;
out:
	close(rs);
	if (rc == -1) {
		size_t l = strlen(err);

		snprintf(err + l, errlen - l, "; set security.landlock: false "
		    "to run without it");
	}
	return rc;
}

int
selfguard_install(const char *socket_path, int *landlock_abi, char *err,
    size_t errlen)
{
	char	tmp[PATH_MAX];
	int	threads = thread_count();

	*landlock_abi = -1;
	if (threads > 1)
		log_warn("%d threads exist before the self-guard is installed; "
		    "the filesystem restriction covers only threads created "
		    "from now on", threads);
	if (app.cfg.security.landlock) {
		*landlock_abi = selfguard_landlock_abi();
		if (*landlock_abi > 0) {
			/*
			 * SQLite's temporary files (large sorts) would go to
			 * /var/tmp or /tmp, outside the domain.
			 */
			snprintf(tmp, sizeof(tmp), "%s/data", app.cfg.instance_dir);
			setenv("SQLITE_TMPDIR", tmp, 0);
			if (landlock_install(socket_path, *landlock_abi, err,
			    errlen) == -1)
				return -1;
		}
	}
	/* NO_NEW_PRIVS is what lets an unprivileged process install a filter. */
	if (app.cfg.security.no_exec &&
	    (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    seccomp_install(err, errlen) == -1))
		return -1;
	return 0;
}

static void
errname(char *buf, size_t len, int e)
{
	const char *n = strerrorname_np(e);

	snprintf(buf, len, "%s", n ? n : "unknown");
}

static void *
probe_thread(void *arg)
{
	return arg;
}

void
selfguard_probe(struct selfguard_probe *p)
{
	static char *const	 argv[] = { "codumentor-probe", NULL };
	static char *const	 envp[] = { NULL };
	/* Never a real program: even without the filter nothing would run. */
	static const char	*nowhere = "/nonexistent/codumentor-probe";
	struct clone_args	 ca;
	pthread_t		 t;
	pid_t			 pid;
	long			 r;
	int			 fd, e;

	memset(p, 0, sizeof(*p));
	execve(nowhere, argv, envp);
	errname(p->execve, sizeof(p->execve), errno);
	syscall(__NR_execveat, AT_FDCWD, nowhere, argv, envp, 0);
	errname(p->execveat, sizeof(p->execveat), errno);

	if ((pid = fork()) == 0)
		_exit(0);
	if (pid > 0) {
		waitpid(pid, NULL, 0);
		strlcpy_(p->fork, "created", sizeof(p->fork));
	} else
		errname(p->fork, sizeof(p->fork), errno);

	/* posix_spawn is clone(CLONE_VM | CLONE_VFORK) then exec. */
	if ((e = posix_spawn(&pid, nowhere, NULL, NULL, argv, envp)) == 0) {
		waitpid(pid, NULL, 0);
		strlcpy_(p->vfork, "created", sizeof(p->vfork));
	} else
		errname(p->vfork, sizeof(p->vfork), e);

	memset(&ca, 0, sizeof(ca));
	ca.exit_signal = SIGCHLD;
	if ((r = syscall(__NR_clone3, &ca, sizeof(ca))) == 0)
		_exit(0);
	if (r > 0) {
		waitpid((pid_t)r, NULL, 0);
		strlcpy_(p->clone3, "created", sizeof(p->clone3));
	} else
		errname(p->clone3, sizeof(p->clone3), errno);

	if ((e = pthread_create(&t, NULL, probe_thread, NULL)) == 0) {
		pthread_join(t, NULL);
		strlcpy_(p->thread, "ok", sizeof(p->thread));
	} else
		errname(p->thread, sizeof(p->thread), e);

	if ((fd = open("/var", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		close(fd);
		strlcpy_(p->read_outside, "ok", sizeof(p->read_outside));
	} else
		errname(p->read_outside, sizeof(p->read_outside), errno);
}
