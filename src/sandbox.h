/*
 * sandbox.h — what the server asks of the sandbox helper (codumentor-sandbox):
 * is isolation usable, and run one command in a conversation's sandbox with
 * a timeout and an output cap. The server never forks or execs itself; every
 * process is created by the helper (DESIGN.md "Process tree").
 */
#ifndef CDM_SANDBOX_H
#define CDM_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Start the helper: called by `codumentor api` (and the CLI) before any
 * thread exists. Failure is not fatal: isolation is then unavailable and
 * sandbox_available() says why (fail closed).
 */
int	sandbox_start(void);
void	sandbox_stop(void);

/* 1 when agent work can run; otherwise 0 and a sentence in reason. */
int	sandbox_available(char *reason, size_t len);

struct sandbox_env {
	const char	*name;
	const char	*value;
};

struct sandbox_run {
	const char		 *conversation_id;	/* its workspace at /workspace */
	const char *const	 *argv;			/* argv[0] looked up in PATH */
	const struct sandbox_env *env;			/* extra variables, or NULL */
	size_t			  nenv;
	int			  timeout_ms;		/* kill everything after */
	size_t			  output_cap;		/* bytes kept of stdout+stderr */
	volatile int		 *cancel;		/* set non-zero to kill; or NULL */
};

struct sandbox_result {
	int	 started;	/* 0: nothing ran; error says why */
	int	 exit_code;	/* when it exited */
	int	 signal;	/* when it was killed by a signal */
	int	 timed_out;
	int	 cancelled;
	char	*output;	/* stdout and stderr interleaved, NUL-terminated */
	size_t	 output_len;
	int	 truncated;	/* output was longer than output_cap */
	char	 error[256];	/* when !started, or a setup failure */
};

/* Run and wait. 0 when the command ran (whatever its status), -1 otherwise. */
int	sandbox_run(const struct sandbox_run *run, struct sandbox_result *res);
void	sandbox_result_free(struct sandbox_result *res);

/*
 * The server changed the conversation's workspace layers itself (the file
 * tools): the helper must not reuse the overlay it keeps mounted between
 * commands (sandbox.keep_mounted_seconds), whose lookups may be stale.
 */
void	sandbox_forget(const char *conversation_id);

/*
 * A turn starts in the conversation: have the helper mount its workspace's
 * overlay now (creating the workspace), so that the turn's first command
 * does not wait for the mount. Nothing when isolation is off or unusable.
 */
void	sandbox_prepare(const char *conversation_id);

/* ---- for the command line (codumentor check, codumentor sandbox run) */

/* What sandbox_start() takes from the configuration, plus the CLI's wishes. */
struct sandbox_opts {
	int	allow_net;	/* `sandbox run --net`: a run may keep the network */
	int	quiet;		/* no log lines: the caller reports failures */
};
int	sandbox_start_opts(const struct sandbox_opts *opts);

/* One prerequisite as `codumentor check` prints it. */
struct sandbox_check {
	char	name[32];
	int	ok;		/* 1 ok, 0 failed, -1 not tested */
	char	detail[512];
};
/* The checks made at the last start (helper binary first); the count. */
size_t	sandbox_checks(struct sandbox_check *v, size_t max);
/* 1 when workspace_isolation is on (sandboxes), 0 when commands run host-direct. */
int	sandbox_isolated(void);

/*
 * `codumentor sandbox run`: explicit layers (upper, work and merged below
 * the workspace base) and the caller's own stdout and stderr, which the
 * command writes to directly. timeout_ms 0 = none. Result as sandbox_run's,
 * without output.
 */
struct sandbox_direct {
	const char		*lower, *upper, *work, *merged;
	const char *const	*argv;
	int			 net;
	int			 out_fd, err_fd;
	int			 timeout_ms;
};
int	sandbox_run_direct(const struct sandbox_direct *d,
	    struct sandbox_result *res);

#endif
