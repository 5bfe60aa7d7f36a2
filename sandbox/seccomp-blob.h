/*
 * seccomp-blob.h — how the seccomp blobs are named, shared by the build-time
 * generator (sandbox/seccomp-gen.c), which writes them, and the sandbox
 * helper, which reads one and hands it to bwrap with --seccomp FD.
 *
 * A blob is raw BPF (struct sock_filter[], 8 bytes an instruction) at
 * <dir>/<arch>-<mode>.bpf, dir being sandbox.seccomp_dir (by default
 * CDM_SECCOMP_DIR, $(pkglibexecdir)/seccomp). There is one blob per kernel
 * family, each covering that family's compat ABIs: "x86_64" (x86-64, x32 and
 * i386) and "aarch64" (aarch64 and 32-bit arm). Modes are "audit" (the
 * blocked calls are logged and allowed, sandbox.seccomp: default) and
 * "enforce"; sandbox.seccomp: off loads no blob at all.
 *
 * Nothing here links libseccomp: the runtime only reads files.
 */
#ifndef CDM_SANDBOX_SECCOMP_H
#define CDM_SANDBOX_SECCOMP_H

#include <string.h>

#define SECCOMP_BLOB_SUFFIX	".bpf"
#define SECCOMP_BLOB_MAX	(4096 * 8)	/* BPF_MAXINSNS instructions */
#define SECCOMP_INSN_SIZE	8		/* sizeof(struct sock_filter) */

/*
 * The blob family for a kernel, from uname(2)'s machine field; NULL when
 * no blob covers it (the caller fails closed). A 32-bit kernel of either
 * family is covered by the 64-bit blob, which checks those ABIs too.
 */
static inline const char *
seccomp_blob_arch(const char *machine)
{
	if (strcmp(machine, "x86_64") == 0 || strcmp(machine, "i386") == 0 ||
	    strcmp(machine, "i486") == 0 || strcmp(machine, "i586") == 0 ||
	    strcmp(machine, "i686") == 0)
		return "x86_64";
	/* Little-endian only: "armv7b", "aarch64_be" fail the arch check. */
	if (strcmp(machine, "aarch64") == 0 || strcmp(machine, "arm64") == 0 ||
	    (strncmp(machine, "armv", 4) == 0 &&
	    machine[strlen(machine) - 1] == 'l'))
		return "aarch64";
	return NULL;
}

/*
 * The blob mode for a sandbox.seccomp value: "default" audits, "enforce"
 * refuses; NULL for "off" (no filter) and for anything unknown.
 */
static inline const char *
seccomp_blob_mode(const char *setting)
{
	if (strcmp(setting, "default") == 0 || strcmp(setting, "audit") == 0)
		return "audit";
	if (strcmp(setting, "enforce") == 0)
		return "enforce";
	return NULL;
}

#endif
