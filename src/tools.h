/*
 * tools.h — the tool runtime: the registry of tools the model may call (each
 * with a JSON-schema parameter description sent to the model), argument
 * parsing and validation, dispatch, and the shaping of every result (secret
 * redaction, output cap with a visible marker, valid UTF-8). A bad call — an
 * unknown tool, arguments that are not JSON or do not fit the schema —
 * becomes an error result the model sees, never a failure of the turn.
 */
#ifndef CDM_TOOLS_H
#define CDM_TOOLS_H

#include <stddef.h>

struct json_object;

/* Who is calling, for the tool's confinement and for cancellation. */
struct tool_ctx {
	const char	*conv_id;
	const char	*user_id;
	const char	*turn_id;
	volatile int	*cancel;
};

struct tool_result {
	int	 ok;
	char	*output;		/* NUL-terminated, may be NULL */
	size_t	 output_len;
	int	 has_exit_code;
	int	 exit_code;
	char	 error[512];		/* when !ok */
};

typedef void (*tool_fn)(const struct tool_ctx *ctx, struct json_object *args,
	    struct tool_result *res);

struct tool_def {
	const char	*name;
	const char	*description;
	const char	*parameters;	/* JSON schema (the subset validated) */
	tool_fn		 run;
	int		 gated;		/* runs model-written commands: approval */
};

/* Parse the schemas; call once before any worker. 0 / -1. */
int	tools_init(void);
void	tools_cleanup(void);

const struct tool_def *tools_find(const char *name);
/* The "tools" array of a chat request (a new reference). */
struct json_object *tools_request_json(void);

/*
 * Parse ARGS (the model's JSON text) and check it against the tool's
 * schema. 0 with *out an object (put it when done); -1 with res an error.
 */
int	tools_parse_args(const struct tool_def *t, const char *args,
	    struct json_object **out, struct tool_result *res);

/* Set res to a failure with a message (printf-style). */
void	tool_fail(struct tool_result *res, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* Take over BUF (malloc'd, len bytes) as the output. */
void	tool_output(struct tool_result *res, char *buf, size_t len);

/*
 * Make the result safe to store, show and send: redact the user's secrets,
 * replace invalid UTF-8, cap the output at tools.output_cap_bytes with a
 * "[output truncated …]" marker.
 */
void	tools_finish(const struct tool_ctx *ctx, struct tool_result *res);
/* The tool message content the model gets (malloc'd). */
char	*tools_model_content(const struct tool_result *res);
void	tool_result_free(struct tool_result *res);

/* The tool implementations (tool_files.c, tool_shell.c). */
void	tool_read_file(const struct tool_ctx *, struct json_object *, struct tool_result *);
void	tool_write_file(const struct tool_ctx *, struct json_object *, struct tool_result *);
void	tool_edit_file(const struct tool_ctx *, struct json_object *, struct tool_result *);
void	tool_list_dir(const struct tool_ctx *, struct json_object *, struct tool_result *);
void	tool_search_files(const struct tool_ctx *, struct json_object *, struct tool_result *);
void	tool_shell(const struct tool_ctx *, struct json_object *, struct tool_result *);

/* The command a gated call would run (shell: its "command"), or NULL. */
const char *tools_command(struct json_object *args);

#endif
