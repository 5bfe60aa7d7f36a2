/*
 * helper.h — what the parts of codumentor-sandbox share: its fixed
 * configuration (from its command line, set once at exec time and never
 * changed by a message), a validated spawn request, and the functions that
 * start a sandbox (spawn.c) and test that one can be started (selftest.c).
 */
#ifndef CDM_SANDBOX_HELPER_H
#define CDM_SANDBOX_HELPER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto.h"

struct helper_conf {
	const char	*bwrap;		/* absolute path, or a name not found in PATH */
	const char	*base;		/* workspace base; upper/work/merged live below */
	const char	*seccomp_path;	/* the blob, or NULL with mode "off" */
	const char	*seccomp_mode;	/* audit | enforce | off */
	unsigned char	*seccomp;	/* the blob's bytes, read at start */
	size_t		 seccomp_len;
	const char	*seccomp_error;	/* why it was not read */
	int		 isolation;	/* 0: commands run host-direct */
	int		 allow_net;	/* a request may keep the host network */
	char	       **passenv;	/* NAME=VALUE, the helper's own environment */
	uid_t		 uid;
	gid_t		 gid;
};

/* A SPAWN request after validation; strings are owned. */
struct spawn_req {
	char	*lower, *upper, *work, *merged;
	char   **argv;			/* NULL-terminated */
	char   **env;			/* NAME=VALUE, NULL-terminated */
	int	 net;
	int64_t	 timeout_ms;		/* 0: none */
	int	 out_fd, err_fd;	/* err_fd may equal out_fd */
};

/* One started sandbox, as the caller needs to watch it. */
struct spawned {
	pid_t	pid;		/* bwrap, or the command itself when host-direct */
	int	status_fd;	/* read end of bwrap's --json-status-fd, or -1 */
};

struct json_object;

/* Validate a SPAWN body against the configuration. 0, or -1 with err. */
int	spawn_parse(const struct helper_conf *c, struct json_object *o,
	    struct spawn_req *r, char *err, size_t errlen);
void	spawn_req_free(struct spawn_req *r);

/*
 * Start the command of r in the shell profile (or host-direct when isolation
 * is off). Returns 0 once the setup before bwrap succeeded and bwrap was
 * executed; -1 with err (prefixed with the failing step: "userns:",
 * "overlay:", "exec:") when nothing runs. The child is not reaped.
 */
int	spawn_start(const struct helper_conf *c, const struct spawn_req *r,
	    struct spawned *out, char *err, size_t errlen);

/* Whether bwrap's status output says the command itself was started. */
int	spawn_status_started(int status_fd);

struct check {
	const char	*name;
	int		 ok;		/* 1 ok, 0 failed, -1 not tested */
	char		 detail[SBX_REASON_MAX];
};

/*
 * Test, once at start, everything a sandbox needs by building a throw-away
 * one. Fills up to SBX_CHECKS_MAX checks; returns the number, and writes
 * into reason the sentence for the first failure ("" when all passed).
 */
size_t	selftest_run(const struct helper_conf *c, struct check *v,
	    char *reason, size_t len);

#endif
