/*
 * config.h — the server's configuration: one YAML file (libyaml), built-in
 * defaults for every key, and `--set KEY=VALUE` overrides from the command line.
 * An unknown key or a value of the wrong type is an error naming file, line and
 * key. The file format and every key are documented in doc/configuration.md and
 * conf-examples/codumentor.yaml.
 */
#ifndef CDM_CONFIG_H
#define CDM_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

struct llm_profile {
	char	*name;
	char	*base_url;
	char	*model;
	char	*api_key_env;
	int	 context_window;	/* tokens */
	int	 max_output_tokens;
	double	 temperature;
};

struct config {
	char	*path;			/* file it was read from, or NULL */

	char	*instance_dir;		/* data/ and logs/ live below it */
	char	*listen;		/* unix:PATH or HOST:PORT */

	struct {
		int	 workers;		/* accepting worker threads */
		int	 max_streams;		/* open SSE streams at most */
		int	 heartbeat_seconds;	/* ": ping" interval */
		long	 max_body_bytes;	/* request body cap (413 above) */
		int	 shutdown_grace_seconds;/* SIGTERM: in-flight deadline */
		char	*socket_group;		/* group owning the unix socket */
		char	*socket_mode;		/* octal string, default "0660" */
	} server;

	struct {
		char	*level;			/* debug | info | warn | error */
		char	*file;			/* default <instance>/logs/codumentor.log */
	} log;

	struct {
		char	*jwt_secret;
		char   **previous_jwt_secrets;
		size_t	 n_previous_jwt_secrets;
		int	 token_ttl_minutes;
		int	 login_max_failures;	/* per username, then 429 */
		int	 login_lockout_seconds;
	} auth;

	struct {
		char	*default_profile;
		struct llm_profile *profiles;
		size_t	 n_profiles;
		char	*user_base_urls;	/* "URL,URL": allowed in user profiles */
	} llm;

	struct {
		bool	 shell_always_allow;
		int	 approval_timeout_seconds;
		long	 output_cap_bytes;	/* per tool result */
		int	 shell_timeout_seconds;	/* a shell command's limit */
		char	*approval_rules;	/* "deny curl; allow git status" */
	} tools;

	struct {
		int	 workers;		/* turns running at once */
		int	 max_steps;		/* model calls per turn */
		char	*system_prompt;
		int	 llm_connect_timeout_seconds;
		int	 llm_idle_timeout_seconds;
		int	 llm_max_retries;	/* 429 and 5xx */
		int	 delta_flush_ms;	/* coalescing of message.delta */
	} engine;

	struct {
		bool	 enabled;
		char	*base_dir;
		int	 ttl_days;
	} workspace_isolation;

	struct {
		bool	 unshare_net;
		char	*seccomp;		/* default | enforce | off */
		char	*seccomp_dir;		/* <arch>-<mode>.bpf blobs */
		char	*helper_path;		/* "" = beside codumentor, else pkglibexecdir */
		char	*bwrap_path;		/* a name looked up in PATH, or a path */
		char	*env_passthrough;	/* "NAME,NAME": host variables for sandboxes */
		int	 keep_mounted_seconds;	/* a workspace's overlay between commands */
	} sandbox;

	struct {
		bool	 no_exec;		/* seccomp: the server cannot exec or fork */
		bool	 landlock;		/* Landlock: the server's own file access */
	} security;
};

/* Fill cfg with the built-in defaults. */
void	config_defaults(struct config *cfg);

/*
 * Read PATH over the defaults already in cfg. On error returns -1 and writes
 * one sentence ("FILE:LINE: key 'a.b': expected an integer") into err.
 */
int	config_load_file(struct config *cfg, const char *path, char *err, size_t errlen);

/* Apply one "dotted.key=value" override; -1 with a message in err on error. */
int	config_set(struct config *cfg, const char *assignment, char *err, size_t errlen);

/*
 * After file and overrides: take CODUMENTOR_JWT_SECRET from the environment
 * when set, expand a leading "~/" in paths, and check cross-key rules (the
 * default profile exists, seccomp mode is known, ...). -1 with err on error.
 */
int	config_finish(struct config *cfg, char *err, size_t errlen);

const struct llm_profile *config_profile(const struct config *cfg, const char *name);

void	config_free(struct config *cfg);

#endif
