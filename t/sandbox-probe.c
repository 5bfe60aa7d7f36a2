/*
 * sandbox-probe.c — run inside a bwrap sandbox by t/30-seccomp.py: attempts
 * each operation the seccomp blocklist refuses (and a few it must not),
 * each in a child of its own, and prints one line per attempt, "NAME OK",
 * "NAME E<errno name>" or "NAME SIG<n>"; "status" prints the sandbox's
 * Seccomp, NoNewPrivs and CapEff lines instead.
 *
 * It only reports; the test holds the expectations. Arguments are chosen so
 * that, without the filter, the kernel answers with an errno other than the
 * filter's where it can (an invalid flag, a missing path), which is what
 * lets audit mode be told apart from enforce. It is built without
 * sanitizers and statically: their runtime makes calls of its own
 * (personality, ptrace-like) and the sandbox has only /usr.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME		0x00000080
#endif
#ifndef TIOCLINUX
#define TIOCLINUX		0x541C
#endif
#define PROBE_HIGH_BIT		(1UL << 32)	/* junk in an int argument's high half */
#define KEYCTL_GET_KEYRING_ID	0
#define KEY_SPEC_THREAD_KEYRING	(-1)
#define KEY_SPEC_PROCESS_KEYRING (-2)
#define KCMP_FILE		0
#define Q_SYNC_USR		((0x800001 << 8) | 0)	/* QCMD(Q_SYNC, USRQUOTA) */
#define UFFD_USER_MODE_ONLY	1
#define FAN_REPORT_FID		0x00000200
#define READ_IMPLIES_EXEC	0x0400000
#define ADDR_NO_RANDOMIZE	0x0040000
#define X32_BIT			0x40000000UL

/* Each attempt: -1 with errno, or anything else for success. */
static long sys_clone(unsigned long f)
{
	/* CLONE_SIGHAND without CLONE_VM: the kernel says EINVAL, the filter EPERM. */
	return syscall(SYS_clone, f | CLONE_SIGHAND, 0, 0, 0, 0);
}
static long a_clone3(void) { return syscall(SYS_clone3, NULL, 0); }
static long a_clone_newuser(void) { return sys_clone(CLONE_NEWUSER); }
static long a_clone_newns(void) { return sys_clone(CLONE_NEWNS); }
static long a_clone_newpid(void) { return sys_clone(CLONE_NEWPID); }
static long a_clone_newnet(void) { return sys_clone(CLONE_NEWNET); }
static long a_clone_newuts(void) { return sys_clone(CLONE_NEWUTS); }
static long a_clone_newipc(void) { return sys_clone(CLONE_NEWIPC); }
static long a_clone_newcgroup(void) { return sys_clone(CLONE_NEWCGROUP); }
static long a_clone_newtime(void) { return sys_clone(CLONE_NEWTIME); }
static long a_unshare_user(void) { return unshare(CLONE_NEWUSER); }
static long a_setns(void) { return setns(-1, 0); }
static long a_mount(void) { return mount("none", "/nonexistent", "tmpfs", 0, NULL); }
static long a_umount2(void) { return umount2("/tmp", 0x80000000); }
static long a_pivot_root(void) { return syscall(SYS_pivot_root, "/nonexistent", "/nonexistent"); }
static long a_chroot(void) { return chroot("/nonexistent"); }
static long a_open_tree(void) { return syscall(SYS_open_tree, -1, "", 0xffffffff); }
static long a_move_mount(void) { return syscall(SYS_move_mount, -1, "", -1, "", 0xffffffff); }
static long a_fsopen(void) { return syscall(SYS_fsopen, "tmpfs", 0); }
static long a_fsconfig(void) { return syscall(SYS_fsconfig, -1, 0, NULL, NULL, 0); }
static long a_fsmount(void) { return syscall(SYS_fsmount, -1, 0, 0); }
static long a_fspick(void) { return syscall(SYS_fspick, -1, "", 0xffffffff); }
static long a_mount_setattr(void) { return syscall(SYS_mount_setattr, -1, "", 0xffffffff, NULL, 0); }
static long a_io_uring_setup(void)
{
	static char params[120];	/* struct io_uring_params, zeroed */

	return syscall(SYS_io_uring_setup, 4, params);
}
static long a_io_uring_enter(void) { return syscall(SYS_io_uring_enter, -1, 0, 0, 0, NULL, 0); }
static long a_io_uring_register(void) { return syscall(SYS_io_uring_register, -1, 0, NULL, 0); }
static long a_keyctl(void) { return syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_THREAD_KEYRING, 0); }
static long a_add_key(void) { return syscall(SYS_add_key, "user", "cdm-probe", "x", 1, KEY_SPEC_PROCESS_KEYRING); }
static long a_request_key(void) { return syscall(SYS_request_key, "user", "cdm-probe-none", NULL, 0); }
static long a_bpf(void) { return syscall(SYS_bpf, 9999, NULL, 0); }
static long a_perf_event_open(void) { return syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0); }
static long a_userfaultfd(void) { return syscall(SYS_userfaultfd, UFFD_USER_MODE_ONLY | O_CLOEXEC); }
static long a_ptrace(void) { return syscall(SYS_ptrace, 16 /* ATTACH */, 999999, 0, 0); }
static long a_process_vm_readv(void)
{
	char src[8] = "x", dst[8];
	struct iovec l = { dst, sizeof(dst) }, rm = { src, sizeof(src) };

	return process_vm_readv(getpid(), &l, 1, &rm, 1, 0);
}
static long a_process_vm_writev(void)
{
	char src[8] = "x", dst[8];
	struct iovec l = { src, sizeof(src) }, rm = { dst, sizeof(dst) };

	return process_vm_writev(getpid(), &l, 1, &rm, 1, 0);
}
static long a_kcmp(void) { return syscall(SYS_kcmp, getpid(), getpid(), KCMP_FILE, 0, 0); }
static long a_pidfd_getfd(void)
{
	long pfd = syscall(SYS_pidfd_open, getpid(), 0);

	if (pfd == -1)
		return -1;
	return syscall(SYS_pidfd_getfd, pfd, 0, 0);
}
static long a_kexec_load(void) { return syscall(SYS_kexec_load, 0, 0, NULL, 0); }
static long a_kexec_file_load(void) { return syscall(SYS_kexec_file_load, -1, -1, 0, NULL, 0); }
static long a_init_module(void) { return syscall(SYS_init_module, NULL, 0, ""); }
static long a_finit_module(void) { return syscall(SYS_finit_module, -1, "", 0); }
static long a_delete_module(void) { return syscall(SYS_delete_module, "cdm_none", 0); }
static long a_reboot(void) { return syscall(SYS_reboot, 0, 0, 0, NULL); }
static long a_swapon(void) { return syscall(SYS_swapon, "/nonexistent", 0); }
static long a_swapoff(void) { return syscall(SYS_swapoff, "/nonexistent"); }
static long a_syslog(void) { return syscall(SYS_syslog, 10 /* SIZE_BUFFER */, NULL, 0); }
static long a_acct(void) { return syscall(SYS_acct, NULL); }
static long a_quotactl(void) { return syscall(SYS_quotactl, Q_SYNC_USR, NULL, 0, NULL); }
static long a_quotactl_fd(void) { return syscall(SYS_quotactl_fd, -1, Q_SYNC_USR, 0, NULL); }
static long a_open_by_handle_at(void) { return syscall(SYS_open_by_handle_at, -1, NULL, 0); }
static long a_fanotify_init(void) { return syscall(SYS_fanotify_init, FAN_REPORT_FID, O_RDONLY); }

static long persona(unsigned long v) { return syscall(SYS_personality, v); }
static long a_personality_rie(void) { return persona(READ_IMPLIES_EXEC); }
static long a_personality_norandom(void) { return persona(ADDR_NO_RANDOMIZE); }
static long a_personality_linux32_norandom(void) { return persona(8 | ADDR_NO_RANDOMIZE); }
static long a_personality_1(void) { return persona(1); }
static long a_personality_9(void) { return persona(9); }
static long a_personality_fffffffe(void) { return persona(0xfffffffe); }
static long a_personality_7fffffff(void) { return persona(0x7fffffff); }
static long a_personality_80000000(void) { return persona(0x80000000); }
static long a_personality_high_rie(void) { return persona(PROBE_HIGH_BIT | READ_IMPLIES_EXEC); }
static long a_personality_query(void) { return persona(0xffffffff); }
static long a_personality_query64(void) { return persona(~0UL); }
static long a_personality_linux(void) { return persona(0); }
static long a_personality_linux32(void) { return persona(8); }
static long a_personality_high_linux(void) { return persona(PROBE_HIGH_BIT); }

static long tty_ioctl(unsigned long cmd)
{
	char c = 'x';
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (fd == -1)
		return -1;
	/* Not a tty: the kernel says ENOTTY, the filter EPERM. */
	return syscall(SYS_ioctl, fd, cmd, &c);
}
static long a_ioctl_tiocsti(void) { return tty_ioctl(TIOCSTI); }
static long a_ioctl_tiocsti_high(void) { return tty_ioctl(PROBE_HIGH_BIT | TIOCSTI); }
static long a_ioctl_tioclinux(void) { return tty_ioctl(TIOCLINUX); }
static long a_ioctl_tiocgwinsz(void) { return tty_ioctl(TIOCGWINSZ); }
static long a_ioctl_fionread(void)
{
	int p[2], n;

	if (pipe(p) == -1)
		return -1;
	return ioctl(p[0], FIONREAD, &n);
}

static long a_socket_packet(void) { return socket(AF_PACKET, SOCK_RAW, 0); }
static long a_socket_packet_high(void) { return syscall(SYS_socket, PROBE_HIGH_BIT | AF_PACKET, SOCK_RAW, 0); }
static long a_socket_vsock(void) { return socket(40 /* AF_VSOCK */, SOCK_STREAM, 0); }
static long a_socket_alg(void) { return socket(38 /* AF_ALG */, SOCK_SEQPACKET, 0); }
static long a_socket_key(void) { return socket(15 /* AF_KEY */, SOCK_RAW, 2); }
static long a_socketpair_packet(void)
{
	int sv[2];

	return socketpair(AF_PACKET, SOCK_RAW, 0, sv);
}
static long a_socket_unix(void) { return socket(AF_UNIX, SOCK_STREAM, 0); }
static long a_socket_inet(void) { return socket(AF_INET, SOCK_STREAM, 0); }
static long a_socket_inet6(void) { return socket(AF_INET6, SOCK_DGRAM, 0); }
static long a_socket_netlink(void) { return socket(AF_NETLINK, SOCK_RAW, 0 /* ROUTE */); }
static long a_socketpair_unix(void)
{
	int sv[2];

	return socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
}

/* glibc starts threads with clone3 and, on ENOSYS, falls back to clone. */
static void *thread_main(void *arg) { return arg; }
static long a_thread(void)
{
	pthread_t t;
	int e;

	if ((e = pthread_create(&t, NULL, thread_main, NULL)) != 0 ||
	    (e = pthread_join(t, NULL)) != 0) {
		errno = e;
		return -1;
	}
	return 0;
}
static long a_fork_exec(void)
{
	char *argv[] = { "true", NULL };
	int status;
	pid_t pid;

	if ((pid = fork()) == -1)
		return -1;
	if (pid == 0) {
		execv("/usr/bin/true", argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) == -1)
		return -1;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		errno = ECHILD;
		return -1;
	}
	return 0;
}

#ifdef __x86_64__
/*
 * The i386 ABI from a 64-bit process: "int $0x80" is checked against the
 * filter as AUDIT_ARCH_I386. Pointers must fit in 32 bits: MAP_32BIT.
 */
static long
i386_call(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile ("int $0x80" : "=a"(ret)
	    : "a"(nr), "b"(a), "c"(b), "d"(c) : "memory");
	if (ret < 0 && ret > -4096) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}
static char *
low_page(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}
static long a_i386_getpid(void) { return i386_call(20, 0, 0, 0); }
static long a_i386_unshare(void) { return i386_call(310, CLONE_NEWUSER, 0, 0); }
static long a_i386_umount(void)
{
	char *p = low_page();

	if (p == NULL)
		return -1;
	strcpy(p, "/nonexistent");
	return i386_call(22, (long)(uintptr_t)p, 0, 0);
}
static long a_i386_mount(void)
{
	char *p = low_page();

	if (p == NULL)
		return -1;
	strcpy(p, "/nonexistent");
	strcpy(p + 64, "tmpfs");
	return i386_call(21, (long)(uintptr_t)(p + 64),
	    (long)(uintptr_t)p, (long)(uintptr_t)(p + 64));
}
static long a_i386_personality(void) { return i386_call(136, READ_IMPLIES_EXEC, 0, 0); }
static long a_i386_clone3(void) { return i386_call(435, 0, 0, 0); }
static long a_i386_io_uring_setup(void) { return i386_call(425, 4, 0, 0); }
static long a_i386_socket_packet(void) { return i386_call(359, AF_PACKET, SOCK_RAW, 0); }
static long a_i386_socket_unix(void) { return i386_call(359, AF_UNIX, SOCK_STREAM, 0); }
static long a_i386_socketcall_unix(void)
{
	uint32_t *args = (uint32_t *)low_page();

	if (args == NULL)
		return -1;
	args[0] = AF_UNIX;
	args[1] = SOCK_STREAM;
	args[2] = 0;
	return i386_call(102, 1 /* SYS_SOCKET */, (long)(uintptr_t)args, 0);
}
static long a_i386_keyctl(void) { return i386_call(288, KEYCTL_GET_KEYRING_ID, KEY_SPEC_THREAD_KEYRING, 0); }
static long a_i386_ioctl_tiocsti(void)
{
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (fd == -1)
		return -1;
	return i386_call(54, fd, TIOCSTI, 0);
}
/* The x32 ABI: the same entry with bit 30 set in the number. */
static long a_x32_unshare(void) { return syscall(X32_BIT | 272, CLONE_NEWUSER); }
static long a_x32_getpid(void) { return syscall(X32_BIT | 39); }
#endif

struct attempt {
	const char	*name;
	long		(*fn)(void);
};

#define A(n)	{ #n, a_##n }
static const struct attempt attempts[] = {
	A(clone3), A(clone_newuser), A(clone_newns), A(clone_newpid),
	A(clone_newnet), A(clone_newuts), A(clone_newipc), A(clone_newcgroup),
	A(clone_newtime), A(unshare_user), A(setns),
	A(mount), A(umount2), A(pivot_root), A(chroot),
	A(open_tree), A(move_mount), A(fsopen), A(fsconfig), A(fsmount),
	A(fspick), A(mount_setattr),
	A(io_uring_setup), A(io_uring_enter), A(io_uring_register),
	A(keyctl), A(add_key), A(request_key),
	A(bpf), A(perf_event_open), A(userfaultfd),
	A(ptrace), A(process_vm_readv), A(process_vm_writev), A(kcmp),
	A(pidfd_getfd),
	A(kexec_load), A(kexec_file_load), A(init_module), A(finit_module),
	A(delete_module), A(reboot), A(swapon), A(swapoff), A(syslog),
	A(acct), A(quotactl), A(quotactl_fd), A(open_by_handle_at),
	A(fanotify_init),
	A(personality_rie), A(personality_norandom),
	A(personality_linux32_norandom), A(personality_1), A(personality_9),
	A(personality_fffffffe), A(personality_7fffffff),
	A(personality_80000000), A(personality_high_rie),
	A(personality_query), A(personality_query64), A(personality_linux),
	A(personality_linux32), A(personality_high_linux),
	A(ioctl_tiocsti), A(ioctl_tiocsti_high), A(ioctl_tioclinux),
	A(ioctl_tiocgwinsz), A(ioctl_fionread),
	A(socket_packet), A(socket_packet_high), A(socket_vsock),
	A(socket_alg), A(socket_key), A(socketpair_packet),
	A(socket_unix), A(socket_inet), A(socket_inet6), A(socket_netlink),
	A(socketpair_unix),
	A(thread), A(fork_exec),
#ifdef __x86_64__
	A(i386_getpid), A(i386_unshare), A(i386_umount), A(i386_mount),
	A(i386_personality), A(i386_clone3), A(i386_io_uring_setup),
	A(i386_socket_packet), A(i386_socket_unix), A(i386_socketcall_unix),
	A(i386_keyctl), A(i386_ioctl_tiocsti),
	A(x32_unshare), A(x32_getpid),
#endif
};
#undef A

/* Run one attempt in a child, so nothing it changes reaches the next. */
static void
run(const struct attempt *a)
{
	const char *name;
	int status;
	pid_t pid;

	fflush(stdout);
	if ((pid = fork()) == -1) {
		printf("%s fork-failed\n", a->name);
		return;
	}
	if (pid == 0) {
		errno = 0;
		if (a->fn() != -1)
			_exit(0);
		_exit(errno > 0 && errno < 255 ? errno : 255);
	}
	if (waitpid(pid, &status, 0) == -1) {
		printf("%s wait-failed\n", a->name);
		return;
	}
	if (WIFSIGNALED(status))
		printf("%s SIG%d\n", a->name, WTERMSIG(status));
	else if (WEXITSTATUS(status) == 0)
		printf("%s OK\n", a->name);
	else if ((name = strerrorname_np(WEXITSTATUS(status))) != NULL)
		printf("%s %s\n", a->name, name);
	else
		printf("%s E%d\n", a->name, WEXITSTATUS(status));
}

/* The lines of /proc/self/status the test checks, as "status.Name value". */
static int
status(void)
{
	static const char *const want[] = { "Seccomp:", "NoNewPrivs:", "CapEff:" };
	char line[256];
	size_t i, n;
	FILE *f;

	if ((f = fopen("/proc/self/status", "re")) == NULL) {
		perror("/proc/self/status");
		return 1;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
			n = strlen(want[i]);
			if (strncmp(line, want[i], n) == 0)
				printf("status.%.*s %s", (int)n - 1, line,
				    line + n + strspn(line + n, " \t"));
		}
	}
	fclose(f);
	return 0;
}

int
main(int argc, char *argv[])
{
	size_t i;
	int j, found;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && strcmp(argv[1], "status") == 0)
		return status();
	if (argc == 2 && strcmp(argv[1], "list") == 0) {
		for (i = 0; i < sizeof(attempts) / sizeof(attempts[0]); i++)
			printf("%s\n", attempts[i].name);
		return 0;
	}
	for (i = 0; i < sizeof(attempts) / sizeof(attempts[0]); i++) {
		found = argc == 1;
		for (j = 1; j < argc && !found; j++)
			found = strcmp(argv[j], attempts[i].name) == 0;
		if (found)
			run(&attempts[i]);
	}
	return 0;
}
