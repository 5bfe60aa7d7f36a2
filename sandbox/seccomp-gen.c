/*
 * seccomp-gen.c — the build-time generator of the sandbox's system-call
 * filter: one table (blocklist[] below) turned by libseccomp into raw BPF
 * for one kernel family and one mode, written to a file the sandbox helper
 * hands to bwrap with --seccomp FD (names in sandbox/seccomp-blob.h).
 *
 * It is a noinst program run by make, never installed: the runtime reads
 * the blobs and does not link libseccomp. It does not load any filter.
 *
 * The filter is a blocklist, default ALLOW, so ordinary toolchains are not
 * affected; it refuses the kernel entry points that serve to escape or to
 * widen the attack surface from inside a bwrap sandbox. Architecture first:
 * a system call from an ABI the blob does not cover kills the process, so
 * the compat ABIs (i386 and x32 on x86-64, arm on aarch64) cannot be used
 * to step around a rule written for the native one. Rules are written with
 * the syscall's name, which libseccomp resolves for every ABI in the blob
 * (a name an ABI lacks, like umount on x86-64, is skipped for that ABI).
 *
 * Constants compared against arguments (CLONE_*, AF_*, TIOCSTI, personality
 * values) are taken from this host's headers; they are the same numbers on
 * x86 and arm (asm-generic ioctls), the two families generated. A port to a
 * family with its own ioctl numbers (powerpc, mips) must check them.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <seccomp.h>

#include "seccomp-blob.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME	0x00000080
#endif
#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP	0x02000000
#endif
#ifndef TIOCLINUX
#define TIOCLINUX	0x541C
#endif

#define LOW32		0xffffffffULL

/* i386's socketcall(2) multiplexer: the first argument says which call. */
#define SYS_SOCKET_CALL		1
#define SYS_SOCKETPAIR_CALL	8

/*
 * What a rule compares. Each rule compares at most one argument, once
 * (libseccomp's limit); a condition that needs more is several rules.
 */
enum cond {
	ANY,		/* every call */
	FLAG_SET,	/* (arg & v) == v: a flag bit is set */
	LOW32_EQ,	/* (arg & 0xffffffff) == v: the kernel reads an int */
	FAMILY,		/* a socket family other than the four allowed */
	PERSONA,	/* a personality other than the standard ones */
};

struct rule {
	const char	*name;		/* system call, resolved per ABI */
	int		 err;		/* errno returned in enforce mode */
	enum cond	 cond;
	unsigned int	 arg;		/* which argument, 0-based */
	uint64_t	 val;
};

#define DENY(name, err)			{ name, err, ANY, 0, 0 }
#define DENY_IF(name, err, c, a, v)	{ name, err, c, a, v }

/*
 * The blocklist. clone3 and the newer interfaces answer ENOSYS, which makes
 * libc fall back to the filtered clone(2) (clone3 cannot be filtered: its
 * flags are behind a pointer) and makes programs treat the interface as
 * absent rather than broken; the rest answer EPERM, as without privilege.
 */
static const struct rule blocklist[] = {
	/*
	 * Namespaces. A nested user namespace hands its creator every
	 * capability over a fresh set of kernel objects: most unprivileged
	 * kernel LPEs of recent years start there (CVE-2022-0185 fsconfig
	 * heap overflow, CVE-2023-0386 overlayfs, CVE-2023-32233 nf_tables).
	 * Other new namespaces are refused too: the sandbox has the ones it
	 * needs, and none may be replaced from inside.
	 */
	DENY("clone3", ENOSYS),
	DENY_IF("clone", EPERM, FLAG_SET, 0, CLONE_NEWUSER),
	DENY_IF("clone", EPERM, FLAG_SET, 0, CLONE_NEWNS),
	DENY_IF("clone", EPERM, FLAG_SET, 0, CLONE_NEWPID),
	DENY_IF("clone", EPERM, FLAG_SET, 0, CLONE_NEWNET),
	DENY_IF("clone", EPERM, FLAG_SET, 0, CLONE_NEWUTS),
	DENY_IF("clone", EPERM, FLAG_SET, 0, CLONE_NEWIPC),
	DENY_IF("clone", EPERM, FLAG_SET, 0, CLONE_NEWCGROUP),
	/* clone(2) reads this bit as exit signal; no valid signal sets it. */
	DENY_IF("clone", EPERM, FLAG_SET, 0, CLONE_NEWTIME),
	DENY("unshare", EPERM),
	DENY("setns", EPERM),		/* join a namespace through an fd */

	/* Mounts: rearranging the view bwrap built (and mount bugs). */
	DENY("mount", EPERM),
	DENY("umount2", EPERM),
	DENY("umount", EPERM),		/* i386 and arm only */
	DENY("pivot_root", EPERM),
	DENY("chroot", EPERM),
	/* The new mount API: CVE-2022-0185 was in fsconfig. */
	DENY("open_tree", ENOSYS),
	DENY("move_mount", ENOSYS),
	DENY("fsopen", ENOSYS),
	DENY("fsconfig", ENOSYS),
	DENY("fsmount", ENOSYS),
	DENY("fspick", ENOSYS),
	DENY("mount_setattr", ENOSYS),

	/*
	 * io_uring: a second system-call surface that seccomp cannot see
	 * into (CVE-2022-29582, CVE-2023-2598).
	 */
	DENY("io_uring_setup", ENOSYS),
	DENY("io_uring_enter", ENOSYS),
	DENY("io_uring_register", ENOSYS),

	/* Kernel keyrings: not namespaced, shared with the host (CVE-2016-0728). */
	DENY("keyctl", EPERM),
	DENY("add_key", EPERM),
	DENY("request_key", EPERM),

	/*
	 * eBPF verifier bugs (CVE-2021-3490, CVE-2021-31440) and perf events
	 * (CVE-2013-2094, CVE-2023-5717).
	 */
	DENY("bpf", EPERM),
	DENY("perf_event_open", EPERM),
	/* userfaultfd stalls the kernel mid-copy: many exploits' race widener. */
	DENY("userfaultfd", EPERM),

	/* Other processes' memory and descriptors: ptrace-like access. */
	DENY("ptrace", EPERM),
	DENY("process_vm_readv", EPERM),
	DENY("process_vm_writev", EPERM),
	DENY("kcmp", EPERM),		/* kernel object order (KASLR-ish) */
	DENY("pidfd_getfd", EPERM),

	/* The machine itself: kernel, modules, power, swap, logs, accounting. */
	DENY("kexec_load", EPERM),
	DENY("kexec_file_load", EPERM),
	DENY("init_module", EPERM),
	DENY("finit_module", EPERM),
	DENY("delete_module", EPERM),
	DENY("reboot", EPERM),
	DENY("swapon", EPERM),
	DENY("swapoff", EPERM),
	DENY("syslog", EPERM),		/* kernel addresses, others' audit lines */
	DENY("acct", EPERM),
	DENY("quotactl", EPERM),
	DENY("quotactl_fd", EPERM),
	/* Host files by handle, outside every mount: the "shocker" escape. */
	DENY("open_by_handle_at", EPERM),
	DENY("fanotify_init", EPERM),	/* watch the whole filesystem */

	/*
	 * personality(2): READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE, MMAP_PAGE_ZERO
	 * weaken the payload's own memory protections (CVE-2009-1895) for
	 * whatever it execs next. Allowed: PER_LINUX (0), PER_LINUX32 (8)
	 * and the query 0xffffffff, on the low 32 bits the kernel reads.
	 */
	DENY_IF("personality", EPERM, PERSONA, 0, 0),

	/*
	 * Terminal input injection: TIOCSTI pushes characters into the
	 * controlling terminal's input, executed by whoever reads it after
	 * the sandbox (CVE-2017-5226, bwrap's own); TIOCLINUX selection
	 * paste does the same on a VT (CVE-2023-1523). The command is an
	 * int: compared on the low 32 bits, or setting a high bit would
	 * slip past (CVE-2019-10063, flatpak).
	 */
	DENY_IF("ioctl", EPERM, LOW32_EQ, 1, TIOCSTI),
	DENY_IF("ioctl", EPERM, LOW32_EQ, 1, TIOCLINUX),

	/*
	 * Socket families: only UNIX, INET, INET6 and NETLINK. The others
	 * are rarely used code reachable without privilege (AF_PACKET
	 * CVE-2017-7308, AF_VSOCK CVE-2021-26708, AF_ALG CVE-2015-8970,
	 * AF_TIPC CVE-2021-43267, AF_RDS CVE-2010-3904).
	 */
	DENY_IF("socket", EAFNOSUPPORT, FAMILY, 0, 0),
	DENY_IF("socketpair", EAFNOSUPPORT, FAMILY, 0, 0),
	/*
	 * i386's socketcall(2) passes socket()'s arguments behind a pointer
	 * that BPF cannot read, so the family cannot be checked there:
	 * socketcall(SYS_SOCKET) and (SYS_SOCKETPAIR) are refused whatever
	 * the family, and a 32-bit program must use the direct socket(2)
	 * (Linux >= 4.3). The other socketcall operations act on existing
	 * sockets and stay allowed.
	 */
	DENY_IF("socketcall", EAFNOSUPPORT, LOW32_EQ, 0, SYS_SOCKET_CALL),
	DENY_IF("socketcall", EAFNOSUPPORT, LOW32_EQ, 0, SYS_SOCKETPAIR_CALL),
};

/* Socket families refused below AF_NETLINK + 1; everything above is too. */
static const int bad_families[] = {
	AF_UNSPEC, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15,
};

static int	add_one(scmp_filter_ctx, uint32_t, int,
	    const struct scmp_arg_cmp *);
static int	add_rule(scmp_filter_ctx, const struct rule *, int);
static int	build(scmp_filter_ctx, const char *, int);
static void	usage(void);

static void
usage(void)
{
	fprintf(stderr, "usage: seccomp-gen [-p] x86_64|aarch64 audit|enforce "
	    "OUTPUT|-\n  -p  write libseccomp's readable PFC instead of BPF\n");
	exit(2);
}

/* One libseccomp rule, with or without one comparison. */
static int
add_one(scmp_filter_ctx ctx, uint32_t action, int nr,
    const struct scmp_arg_cmp *cmp)
{
	int rc;

	if (cmp == NULL)
		rc = seccomp_rule_add(ctx, action, nr, 0);
	else
		rc = seccomp_rule_add(ctx, action, nr, 1, *cmp);
	return rc;
}

/*
 * Add the libseccomp rules for one table row. audit: log and allow instead
 * of refusing, the same conditions.
 */
static int
add_rule(scmp_filter_ctx ctx, const struct rule *r, int audit)
{
	struct scmp_arg_cmp cmp;
	uint32_t action;
	size_t i;
	int nr, bit, rc;

	nr = seccomp_syscall_resolve_name(r->name);
	if (nr == __NR_SCMP_ERROR) {
		fprintf(stderr, "seccomp-gen: libseccomp does not know the "
		    "system call %s; a newer libseccomp is needed\n", r->name);
		return -ENOSYS;
	}
	action = audit ? SCMP_ACT_LOG : SCMP_ACT_ERRNO((uint16_t)r->err);

	switch (r->cond) {
	case ANY:
		return add_one(ctx, action, nr, NULL);
	case FLAG_SET:
		cmp = SCMP_CMP64(r->arg, SCMP_CMP_MASKED_EQ, r->val, r->val);
		return add_one(ctx, action, nr, &cmp);
	case LOW32_EQ:
		cmp = SCMP_CMP64(r->arg, SCMP_CMP_MASKED_EQ, LOW32, r->val);
		return add_one(ctx, action, nr, &cmp);
	case FAMILY:
		/*
		 * The kernel reads an int. Each family below 17 is matched
		 * on the low 32 bits; ">= 17" on all 64, which also catches
		 * a small family with junk in the high half: refused too,
		 * a false positive only for callers of raw syscall(2) with
		 * garbage in the register, never a way around the rule.
		 */
		for (i = 0; i < sizeof(bad_families) / sizeof(bad_families[0]);
		    i++) {
			cmp = SCMP_CMP64(r->arg, SCMP_CMP_MASKED_EQ, LOW32,
			    (uint64_t)bad_families[i]);
			if ((rc = add_one(ctx, action, nr, &cmp)) < 0)
				return rc;
		}
		cmp = SCMP_CMP64(r->arg, SCMP_CMP_GE, (uint64_t)AF_NETLINK + 1);
		return add_one(ctx, action, nr, &cmp);
	case PERSONA:
		/*
		 * "Low 32 bits not 0, 8 or 0xffffffff" as a union of
		 * (bit i set, bit j clear) tests, one comparison each. Every
		 * such value has a set bit other than bit 3 and a clear bit,
		 * so walking up from a set bit reaches a set bit k followed
		 * by a clear bit k+1 (mod 32): rule (k, k+1) matches unless
		 * k is 3; then bit 2 is set too (the run of set bits reaching
		 * bit 3 started below it) and rule (2, 4) matches. No rule
		 * matches 0, 8 or 0xffffffff: each needs a set bit other
		 * than 3 and a clear one. 32 rules, t/30 tries the edges.
		 */
		for (bit = 0; bit < 32; bit++) {
			uint64_t set, clear;

			if (bit == 3)
				continue;
			set = 1ULL << bit;
			clear = 1ULL << ((bit + 1) % 32);
			cmp = SCMP_CMP64(r->arg, SCMP_CMP_MASKED_EQ,
			    set | clear, set);
			if ((rc = add_one(ctx, action, nr, &cmp)) < 0)
				return rc;
		}
		cmp = SCMP_CMP64(r->arg, SCMP_CMP_MASKED_EQ,
		    (1ULL << 2) | (1ULL << 4), 1ULL << 2);
		return add_one(ctx, action, nr, &cmp);
	}
	return -EINVAL;
}

/* The ABIs a blob covers, the native one of the family first. */
static int
build(scmp_filter_ctx ctx, const char *family, int audit)
{
	static const struct {
		const char	*family;
		uint32_t	 abis[3];
	} families[] = {
		{ "x86_64",  { SCMP_ARCH_X86_64, SCMP_ARCH_X86, SCMP_ARCH_X32 } },
		{ "aarch64", { SCMP_ARCH_AARCH64, SCMP_ARCH_ARM, 0 } },
	};
	size_t i, j;
	int rc;

	for (i = 0; i < sizeof(families) / sizeof(families[0]); i++)
		if (strcmp(families[i].family, family) == 0)
			break;
	if (i == sizeof(families) / sizeof(families[0]))
		return -EINVAL;

	/*
	 * Add the family's ABIs, then drop the build host's own unless it
	 * is one of them: this is how an aarch64 blob is made on x86-64.
	 */
	for (j = 0; j < 3 && families[i].abis[j] != 0; j++) {
		rc = seccomp_arch_add(ctx, families[i].abis[j]);
		if (rc < 0 && rc != -EEXIST)
			return rc;
	}
	for (j = 0; j < 3; j++)
		if (families[i].abis[j] == seccomp_arch_native())
			break;
	if (j == 3 && (rc = seccomp_arch_remove(ctx, SCMP_ARCH_NATIVE)) < 0)
		return rc;

	for (i = 0; i < sizeof(blocklist) / sizeof(blocklist[0]); i++) {
		if ((rc = add_rule(ctx, &blocklist[i], audit)) < 0) {
			fprintf(stderr, "seccomp-gen: %s: %s\n",
			    blocklist[i].name, strerror(-rc));
			return rc;
		}
	}
	return 0;
}

int
main(int argc, char *argv[])
{
	scmp_filter_ctx ctx;
	const char *family, *mode, *out;
	char *tmp = NULL;
	int pfc = 0, audit, fd = -1, rc, status = 1;

	if (argc > 1 && strcmp(argv[1], "-p") == 0) {
		pfc = 1;
		argc--;
		argv++;
	}
	if (argc != 4)
		usage();
	family = argv[1];
	mode = argv[2];
	out = argv[3];
	if (strcmp(family, "x86_64") != 0 && strcmp(family, "aarch64") != 0)
		usage();
	if (strcmp(mode, "audit") == 0)
		audit = 1;
	else if (strcmp(mode, "enforce") == 0)
		audit = 0;
	else
		usage();

	/*
	 * Optimize level 2 sorts the syscall numbers into a binary tree: a
	 * syscall passes about log2(n) comparisons instead of all of them.
	 * That matters most once, when the filter is attached: the kernel
	 * runs it for every syscall number of every ABI to build its cache
	 * of always-allowed calls, which with the linear list took half a
	 * millisecond of each sandbox's start (doc/performance.md).
	 *
	 * Default ALLOW: a blocklist. An ABI the blob does not cover kills
	 * the process in both modes; audit relaxes the table, not that.
	 * No NO_NEW_PRIVS attribute: the blob is exported, never loaded
	 * here, and bwrap sets no_new_privs itself before loading it.
	 */
	if ((ctx = seccomp_init(SCMP_ACT_ALLOW)) == NULL) {
		fprintf(stderr, "seccomp-gen: seccomp_init failed\n");
		return 1;
	}
	if ((rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH,
	    SCMP_ACT_KILL_PROCESS)) < 0 ||
	    (rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0)) < 0 ||
	    (rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2)) < 0) {
		fprintf(stderr, "seccomp-gen: attributes: %s\n", strerror(-rc));
		goto out;
	}
	if ((rc = build(ctx, family, audit)) < 0)
		goto out;

	if (strcmp(out, "-") == 0) {
		rc = pfc ? seccomp_export_pfc(ctx, STDOUT_FILENO) :
		    seccomp_export_bpf(ctx, STDOUT_FILENO);
		if (rc < 0)
			fprintf(stderr, "seccomp-gen: export: %s\n",
			    strerror(-rc));
		else
			status = 0;
		goto out;
	}

	/* Write aside and rename: make never sees half a blob. */
	if (asprintf(&tmp, "%s.tmp", out) == -1) {
		tmp = NULL;
		goto out;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd == -1) {
		fprintf(stderr, "seccomp-gen: %s: %s\n", tmp, strerror(errno));
		goto out;
	}
	rc = pfc ? seccomp_export_pfc(ctx, fd) : seccomp_export_bpf(ctx, fd);
	if (rc < 0) {
		fprintf(stderr, "seccomp-gen: export: %s\n", strerror(-rc));
		goto out;
	}
	if (fsync(fd) == -1 || close(fd) == -1) {
		fd = -1;
		fprintf(stderr, "seccomp-gen: %s: %s\n", tmp, strerror(errno));
		goto out;
	}
	fd = -1;
	if (rename(tmp, out) == -1) {
		fprintf(stderr, "seccomp-gen: %s: %s\n", out, strerror(errno));
		goto out;
	}
	status = 0;
out:
	if (fd != -1)
		close(fd);
	if (status != 0 && tmp != NULL)
		unlink(tmp);
	free(tmp);
	seccomp_release(ctx);
	return status;
}
