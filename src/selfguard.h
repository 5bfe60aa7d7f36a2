/*
 * selfguard.h — the server that cannot exec: a seccomp filter the resident
 * process installs on itself (no execve, no execveat, no process creation
 * other than threads) and, where the kernel has Landlock, a filesystem
 * domain limited to what the server needs. doc/security.md "The server
 * cannot exec".
 */
#ifndef CDM_SELFGUARD_H
#define CDM_SELFGUARD_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Install what security.no_exec and security.landlock ask for. Call after
 * the sandbox helper is started and the sockets are open, and before any
 * worker thread exists. socket_path (or NULL) is the FastCGI socket the
 * server removes when it stops. 0, or -1 with the reason (and the way out)
 * in err: the caller refuses to serve. A kernel without Landlock is not an
 * error; *landlock_abi is 0 then (and -1 when Landlock was not asked for).
 */
int	selfguard_install(const char *socket_path, int *landlock_abi, char *err,
	    size_t errlen);

/* The Landlock ABI the kernel offers, 0 when none. */
int	selfguard_landlock_abi(void);
/* The architecture the filter is built for, or NULL when unsupported. */
const char *selfguard_arch(void);

/* What the server's own attempts to create a process ended with. */
struct selfguard_probe {
	char	execve[32];		/* errno name, or "ran" */
	char	execveat[32];
	char	fork[32];		/* errno name, or "created" */
	char	vfork[32];		/* posix_spawn (clone with CLONE_VFORK) */
	char	clone3[32];
	char	thread[32];		/* "ok" when pthread_create works */
	char	read_outside[32];	/* open("/var"): errno name or "ok" */
};
void	selfguard_probe(struct selfguard_probe *p);

#endif
