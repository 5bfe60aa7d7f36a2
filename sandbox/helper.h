/*
 * helper.h — what the parts of codumentor-sandbox share: its fixed
 * configuration (from its command line, set once at exec time and never
 * changed by a message), a validated spawn request (request.c), and the
 * functions that start a sandbox (spawn.c), keep overlays mounted (hold.c)
 * and test that one can be started (selftest.c).
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
	int64_t		 keep_ms;	/* overlays stay mounted this long (hold.c) */
	uid_t		 uid;
	gid_t		 gid;
};

#define SBX_ENV_NAME_MAX	128		/* bytes of a variable's name */
#define SBX_ENV_VALUE_MAX	(32 * 1024)	/* and of its value */

/* Small things every part uses (helper.c). Monotonic milliseconds: */
int64_t	helper_now_ms(void);
/* Format into err and return -1: how every step here reports a failure. */
int	helper_fail(char *err, size_t len, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
/* strdup, or abort: the helper has no way to go on without memory. */
char   *helper_strdup(const char *s);

/* A SPAWN request after validation (request.c); strings are owned. */
struct spawn_req {
	char	*lower, *upper, *work, *merged;
	char   **argv;			/* NULL-terminated */
	char   **env;			/* NAME=VALUE, NULL-terminated */
	int	 net;
	int	 hold;			/* keep the overlay mounted afterwards */
	int64_t	 timeout_ms;		/* 0: none */
	int	 out_fd, err_fd;	/* err_fd may equal out_fd */
};

/* A user namespace and the mount namespace with an overlay, as fds. */
struct ns_pair {
	int	user, mnt;
};

/* One started sandbox, as the caller needs to watch it. */
struct spawned {
	pid_t		pid;	/* bwrap, or the command itself when host-direct */
	int		status_fd; /* read end of bwrap's --json-status-fd, or -1 */
	struct ns_pair	ns;	/* the overlay's namespaces when r->hold and
				   they were made for this run; else -1 */
};

struct json_object;

/* Validate a SPAWN body against the configuration (request.c). 0, or -1. */
int	spawn_parse(const struct helper_conf *c, struct json_object *o,
	    struct spawn_req *r, char *err, size_t errlen);
void	spawn_req_free(struct spawn_req *r);
/* Only the four layer paths of a body (PREPARE; the start of SPAWN's). */
int	spawn_parse_layers(const struct helper_conf *c, struct json_object *o,
	    struct spawn_req *r, char *err, size_t errlen);

/*
 * Start the command of r in the shell profile (or host-direct when isolation
 * is off), in the held overlay join when not NULL, else on an overlay
 * mounted now. Returns 0 once the setup before bwrap succeeded and bwrap was
 * executed; -1 with err (prefixed with the failing step: "userns:",
 * "overlay:", "exec:", or "hold:" when join could not be entered) when
 * nothing runs. The child is not reaped.
 */
int	spawn_start(const struct helper_conf *c, const struct spawn_req *r,
	    const struct ns_pair *join, struct spawned *out, char *err,
	    size_t errlen);

/*
 * Mount r's overlay in a new user+mount namespace pair and return it in ns
 * without running anything (hold_refresh). 0, or -1 with err.
 */
int	spawn_prepare(const struct helper_conf *c, const struct spawn_req *r,
	    struct ns_pair *ns, char *err, size_t errlen);

/* Whether bwrap's status output says the command itself was started. */
int	spawn_status_started(int status_fd);

/*
 * Held overlays (hold.c): keep_ms 0 turns holding off. hold_find returns
 * the namespaces of r's workspace if they are still valid for it (and
 * marks them used), hold_add takes ownership of ns, hold_forget drops the
 * one of an upper layer, hold_expire drops the idle ones and returns the
 * ms until the next expiry (-1: none held), hold_clear drops all.
 */
void	hold_init(int64_t keep_ms);
int	hold_enabled(void);
const struct ns_pair *hold_find(const struct spawn_req *r);
void	hold_add(const struct spawn_req *r, struct ns_pair ns);
void	hold_forget(const char *upper);
/*
 * The layers of a held overlay changed: drop it and, unless busy (a
 * command runs there), mount a fresh one of the same layers right away,
 * so that the workspace's next command still finds one held.
 */
void	hold_refresh(const struct helper_conf *c, const char *upper, int busy);
/* Mount and hold r's overlay unless one is held already (then touch it). */
void	hold_prepare(const struct helper_conf *c, const struct spawn_req *r);
int	hold_expire(void);
void	hold_clear(void);

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
