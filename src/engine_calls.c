/*
 * engine_calls.c — a turn's tool calls: each stored with its tool.call
 * event, gated by approval where the tool asks for it (rules first, then
 * the user through approval.required, within tools.approval_timeout_seconds),
 * run, and its result stored as the tool message the model sees next with
 * its tool.result event — each row and its event in one transaction.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "app.h"
#include "approvals.h"
#include "db.h"
#include "engine_turn.h"
#include "events.h"
#include "llm.h"
#include "log.h"
#include "tools.h"

/* A statement with ?1 the turn and ?2 the call bound; NULL on error. */
static sqlite3_stmt *
call_stmt(const char *sql, const struct turn *tu, const struct llm_call *c)
{
	sqlite3_stmt *st;

	if ((st = db_stmt(sql)) == NULL)
		return NULL;
	sqlite3_bind_text(st, 1, tu->t->turn_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, c->id, -1, SQLITE_STATIC);
	return st;
}

static struct json_object *
call_data(const struct turn *tu, const struct llm_call *c)
{
	struct json_object *o = turn_event_data(tu->t->turn_id);

	json_object_object_add(o, "call_id", json_object_new_string(c->id));
	return o;
}

/* Add the event, commit; the transaction is closed either way. */
static int
commit_with(const struct turn *tu, const char *type, struct json_object *data)
{
	if (turn_add_event(tu->t->conv_id, type, data) == -1) {
		events_abort();
		return -1;
	}
	return events_commit();
}

/* ---------------------------------------------------------- tools */

int
turn_call_insert(struct turn *tu, const struct llm_call *c, const char *args)
{
	static const char *sql = "INSERT OR REPLACE INTO tool_calls (turn_id, "
	    "call_id, conversation_id, name, arguments, created_at) VALUES "
	    "(?1, ?2, ?3, ?4, ?5, ?6)";
	struct json_object	*data;
	sqlite3_stmt		*st;
	char			 ts[TIME_BUFSZ];

	time_rfc3339(ts, now_ms());
	if (events_begin() == -1)
		return -1;
	if ((st = call_stmt(sql, tu, c)) == NULL)
		goto fail;
	sqlite3_bind_text(st, 3, tu->t->conv_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, c->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, args, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 6, ts, -1, SQLITE_STATIC);
	if (turn_step_done(st, "tool call insert") == -1)
		goto fail;
	data = call_data(tu, c);
	json_object_object_add(data, "name", json_object_new_string(c->name));
	json_object_object_add(data, "arguments", json_object_new_string(args));
	return commit_with(tu, "tool.call", data);
fail:
	events_abort();
	return -1;
}

/* The call waits: stored as needing approval, approval.required out. */
static int
approval_ask(struct turn *tu, const struct llm_call *c, const char *cmd)
{
	static const char *sql = "UPDATE tool_calls SET needs_approval = 1, "
	    "command = ?3 WHERE turn_id = ?1 AND call_id = ?2";
	struct json_object	*data;
	sqlite3_stmt		*st;

	if (events_begin() == -1)
		return -1;
	if ((st = call_stmt(sql, tu, c)) == NULL)
		goto fail;
	sqlite3_bind_text(st, 3, cmd, -1, SQLITE_STATIC);
	if (turn_step_done(st, "approval request") == -1)
		goto fail;
	data = call_data(tu, c);
	json_object_object_add(data, "name", json_object_new_string(c->name));
	json_object_object_add(data, "command", json_object_new_string(cmd));
	return commit_with(tu, "approval.required", data);
fail:
	events_abort();
	return -1;
}

static int
approval_record(struct turn *tu, const struct llm_call *c, const char *cmd,
    int approve, const char *by)
{
	static const char *sql = "UPDATE tool_calls SET command = ?3, "
	    "decision = ?4, decided_by = ?5, decided_at = ?6 WHERE turn_id = ?1 "
	    "AND call_id = ?2";
	struct json_object	*data;
	sqlite3_stmt		*st;
	const char		*decision = approve ? "approve" : "deny";
	char			 ts[TIME_BUFSZ];

	time_rfc3339(ts, now_ms());
	if (events_begin() == -1)
		return -1;
	if ((st = call_stmt(sql, tu, c)) == NULL)
		goto fail;
	sqlite3_bind_text(st, 3, cmd, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, decision, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, by, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 6, ts, -1, SQLITE_STATIC);
	if (turn_step_done(st, "approval decision") == -1)
		goto fail;
	data = call_data(tu, c);
	json_object_object_add(data, "decision", json_object_new_string(decision));
	json_object_object_add(data, "by", json_object_new_string(by));
	return commit_with(tu, "approval.decided", data);
fail:
	events_abort();
	return -1;
}

/* The result: tool message, tool_calls.ok and tool.result, together. */
static int
store_result(struct turn *tu, const struct llm_call *c,
    const struct tool_result *res)
{
	static const char *sql = "UPDATE tool_calls SET ok = ?3 WHERE "
	    "turn_id = ?1 AND call_id = ?2";
	struct json_object	*data;
	sqlite3_stmt		*st;
	char			 id[ID_BUFSZ], ts[TIME_BUFSZ], *content;

	random_id(id);
	time_rfc3339(ts, now_ms());
	content = tools_model_content(res);
	if (events_begin() == -1) {
		free(content);
		return -1;
	}
	if (turn_message_insert(tu, id, "tool", content, NULL, c->id, ts) == -1)
		goto fail;
	if ((st = call_stmt(sql, tu, c)) == NULL)
		goto fail;
	sqlite3_bind_int(st, 3, res->ok);
	if (turn_step_done(st, "tool result") == -1)
		goto fail;
	data = call_data(tu, c);
	json_object_object_add(data, "ok", json_object_new_boolean(res->ok));
	json_object_object_add(data, "output", json_object_new_string_len(
	    res->output ? res->output : "", (int)res->output_len));
	if (res->has_exit_code)
		json_object_object_add(data, "exit_code",
		    json_object_new_int(res->exit_code));
	if (!res->ok)
		json_object_object_add(data, "error",
		    json_object_new_string(res->error));
	free(content);
	return commit_with(tu, "tool.result", data);
fail:
	free(content);
	events_abort();
	return -1;
}

/*
 * Approval for a gated call. 1 approved, 0 denied (res says why), -1 the
 * turn is being aborted.
 */
static int
gate(struct turn *tu, const struct llm_call *c, struct json_object *args,
    struct tool_result *res)
{
	const char			*cmd = tools_command(args);
	char				 by[APPROVAL_BY_MAX];
	enum approval			 a;
	enum approval_wait_result	 w;
	int				 approve;

	if (cmd == NULL)
		cmd = "";
	a = approval_by_rules(cmd, by, sizeof(by));
	if (a == APPROVAL_ASK) {
		approval_register(tu->t->conv_id, c->id);
		if (approval_ask(tu, c, cmd) == -1) {
			/* Nobody can answer a request that was never shown. */
			approval_submit(tu->t->conv_id, c->id, 0, "error");
		}
		w = approval_wait(tu->t->conv_id, c->id,
		    app.cfg.tools.approval_timeout_seconds, &tu->t->abort, by,
		    sizeof(by));
		if (w == WAIT_CANCELLED)
			return -1;
		approve = w == WAIT_APPROVED;
	} else
		approve = a == APPROVAL_ALLOW;
	if (approval_record(tu, c, cmd, approve, by) == -1)
		log_error("turn %s: an approval decision could not be stored",
		    tu->t->turn_id);
	if (approve)
		return 1;
	if (strcmp(by, "timeout") == 0)
		tool_fail(res, "the command was not run: nobody approved it "
		    "within %d s", app.cfg.tools.approval_timeout_seconds);
	else if (strncmp(by, "rule:", 5) == 0)
		tool_fail(res, "the command was not run: the approval rule "
		    "'%s' denies it", by + 5);
	else
		tool_fail(res, "the command was not run: the user denied it");
	return 0;
}

/* Run one call to its stored result. -1: the turn is being aborted. */
int
turn_call_run(struct turn *tu, const struct llm_call *c, const char *args)
{
	const struct tool_def	*def;
	struct json_object	*parsed = NULL;
	struct tool_result	 res;
	struct tool_ctx		 ctx = { tu->t->conv_id, tu->t->user_id,
				    tu->t->turn_id, &tu->t->abort };
	int			 g;

	memset(&res, 0, sizeof(res));
	if ((def = tools_find(c->name)) == NULL)
		tool_fail(&res, "there is no tool named '%.64s'; the tools are "
		    "read_file, write_file, edit_file, list_dir, search_files "
		    "and shell", c->name);
	else if (tools_parse_args(def, args, &parsed, &res) == 0) {
		g = def->gated ? gate(tu, c, parsed, &res) : 1;
		if (g == -1) {
			json_object_put(parsed);
			return -1;
		}
		if (g == 1)
			def->run(&ctx, parsed, &res);
		json_object_put(parsed);
	}
	tools_finish(&ctx, &res);
	if (store_result(tu, c, &res) == -1)
		log_error("turn %s: a tool result could not be stored",
		    tu->t->turn_id);
	tool_result_free(&res);
	return 0;
}
