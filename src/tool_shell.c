/*
 * tool_shell.c — the shell tool: hands an approved command to the sandbox
 * helper as `sh -c COMMAND` in the conversation's workspace, with the user's
 * command secrets in its environment. The server itself never runs it:
 * when the sandbox is unavailable the call fails with the sandbox's own
 * reason (fail closed). Approval happens before this is reached (engine.c).
 */
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "app.h"
#include "sandbox.h"
#include "secrets.h"
#include "tools.h"
#include "util.h"

#define COMMAND_MAX	(64 * 1024)

void
tool_shell(const struct tool_ctx *ctx, struct json_object *args,
    struct tool_result *res)
{
	struct sandbox_result	 sr;
	struct sandbox_run	 run;
	struct sandbox_env	*env = NULL;
	struct json_object	*v;
	const char		*command = tools_command(args);
	const char		*argv[4];
	char			 reason[256];
	size_t			 nenv = 0;
	int			 timeout = app.cfg.tools.shell_timeout_seconds;

	if (command == NULL || *command == '\0' || strlen(command) > COMMAND_MAX) {
		tool_fail(res, "command must be 1 to %d bytes", COMMAND_MAX);
		return;
	}
	if (json_object_object_get_ex(args, "timeout_seconds", &v) &&
	    json_object_get_int(v) < timeout)
		timeout = json_object_get_int(v);
	if (!sandbox_available(reason, sizeof(reason))) {
		tool_fail(res, "the command was not run: %s", reason);
		return;
	}
	if (secrets_sandbox_env(ctx->user_id, &env, &nenv) == -1) {
		tool_fail(res, "the command was not run: the user's secrets "
		    "could not be read");
		return;
	}
	argv[0] = "sh";
	argv[1] = "-c";
	argv[2] = command;
	argv[3] = NULL;
	memset(&run, 0, sizeof(run));
	run.conversation_id = ctx->conv_id;
	run.argv = argv;
	run.env = env;
	run.nenv = nenv;
	run.timeout_ms = timeout * 1000;
	run.output_cap = (size_t)app.cfg.tools.output_cap_bytes;
	run.cancel = ctx->cancel;
	memset(&sr, 0, sizeof(sr));
	if (sandbox_run(&run, &sr) == -1 || !sr.started) {
		tool_fail(res, "the command was not run: %s",
		    sr.error[0] ? sr.error : "the sandbox failed");
		secrets_env_free(env, nenv);
		sandbox_result_free(&sr);
		return;
	}
	secrets_env_free(env, nenv);
	if (sr.output != NULL) {
		tool_output(res, sr.output, sr.output_len);
		sr.output = NULL;
	}
	res->has_exit_code = !sr.signal && !sr.timed_out && !sr.cancelled;
	res->exit_code = sr.exit_code;
	if (sr.timed_out)
		tool_fail(res, "the command was killed after %d s", timeout);
	else if (sr.cancelled)
		tool_fail(res, "the command was killed: the turn was cancelled");
	else if (sr.signal)
		tool_fail(res, "the command was killed by signal %d", sr.signal);
	else if (sr.exit_code != 0)
		tool_fail(res, "the command exited with status %d",
		    sr.exit_code);
	else
		res->ok = 1;
	if (sr.truncated && res->output != NULL) {
		char *o = xasprintf("%s\n[output truncated by the sandbox at %zu "
		    "bytes]", res->output, run.output_cap);

		tool_output(res, o, strlen(o));
	}
	sandbox_result_free(&sr);
}
