/*
 * engine_turn.c — one turn: call the model, relay its text as coalesced
 * message.delta events, store its answer, run its tool calls (engine_calls.c:
 * approval first for gated tools, the results stored), and call it again until
 * it answers without tool calls or engine.max_steps is reached. Every
 * stored row and the event announcing it are written in one transaction, so
 * the log and the tables never disagree. The end of a turn is written with
 * a guarded UPDATE (only a queued or running turn can end), so a turn gets
 * exactly one turn.completed/failed/cancelled whoever ends it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "app.h"
#include "db.h"
#include "engine_turn.h"
#include "events.h"
#include "history.h"
#include "llm.h"
#include "log.h"
#include "profiles.h"
#include "sandbox.h"
#include "tools.h"

#define DELTA_MAX	1024		/* bytes buffered before a flush */
#define MIN_BUDGET	512		/* tokens of history, whatever the profile */

/* ---------------------------------------------------------- storage */

struct json_object *
turn_event_data(const char *turn_id)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "turn_id", json_object_new_string(turn_id));
	return o;
}

/* Add an event to the open transaction and drop data. -1 on failure. */
int
turn_add_event(const char *conv_id, const char *type, struct json_object *data)
{
	int64_t id = events_add(conv_id, type, data);

	json_object_put(data);
	return id == -1 ? -1 : 0;
}

int
turn_step_done(sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return db_fail(what);
	return 0;
}

/* queued -> running with turn.started; 1 when it was no longer queued. */
static int
turn_begin(struct turn *tu)
{
	static const char *sql = "UPDATE turns SET status = 'running', "
	    "updated_at = ?2 WHERE id = ?1 AND status = 'queued'";
	sqlite3_stmt	*st;
	char		 ts[TIME_BUFSZ];

	time_rfc3339(ts, now_ms());
	if (events_begin() == -1)
		return -1;
	if ((st = db_stmt(sql)) == NULL)
		goto fail;
	sqlite3_bind_text(st, 1, tu->t->turn_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, ts, -1, SQLITE_STATIC);
	if (turn_step_done(st, "turn start") == -1)
		goto fail;
	if (sqlite3_changes(db_conn()) == 0) {
		events_abort();
		return 1;
	}
	if (turn_add_event(tu->t->conv_id, "turn.started",
	    turn_event_data(tu->t->turn_id)) == -1)
		goto fail;
	return events_commit();
fail:
	events_abort();
	return -1;
}

static char *
usage_json(const struct turn *tu)
{
	if (!tu->have_usage)
		return NULL;
	return xasprintf("{\"prompt_tokens\":%lld,\"completion_tokens\":%lld,"
	    "\"total_tokens\":%lld}", tu->usage[0], tu->usage[1], tu->usage[2]);
}

/*
 * End the turn: status completed | failed | cancelled, with its event.
 * Nothing happens if the turn already ended (e.g. cancelled in storage).
 */
static void
turn_end(struct turn *tu, const char *status, const char *error)
{
	static const char *sql = "UPDATE turns SET status = ?2, error = ?3, "
	    "finish_reason = ?4, usage = ?5, steps = ?6, updated_at = ?7 "
	    "WHERE id = ?1 AND status IN ('queued', 'running')";
	struct json_object	*data;
	sqlite3_stmt		*st;
	char			 ts[TIME_BUFSZ], type[32], *usage = usage_json(tu);

	time_rfc3339(ts, now_ms());
	snprintf(type, sizeof(type), "turn.%s", status);
	if (events_begin() == -1)
		goto out;
	if ((st = db_stmt(sql)) == NULL)
		goto fail;
	sqlite3_bind_text(st, 1, tu->t->turn_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, status, -1, SQLITE_STATIC);
	if (error)
		sqlite3_bind_text(st, 3, error, -1, SQLITE_STATIC);
	if (tu->finish_reason[0])
		sqlite3_bind_text(st, 4, tu->finish_reason, -1, SQLITE_STATIC);
	if (usage)
		sqlite3_bind_text(st, 5, usage, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 6, tu->steps);
	sqlite3_bind_text(st, 7, ts, -1, SQLITE_STATIC);
	if (turn_step_done(st, "turn end") == -1)
		goto fail;
	if (sqlite3_changes(db_conn()) == 0) {
		events_abort();
		goto out;
	}
	data = turn_event_data(tu->t->turn_id);
	if (error)
		json_object_object_add(data, "error", json_object_new_string(error));
	if (turn_add_event(tu->t->conv_id, type, data) == -1)
		goto fail;
	if (events_commit() == -1)
		log_error("turn %s: its end could not be stored", tu->t->turn_id);
	else if (error)
		log_info("turn %s %s: %s", tu->t->turn_id, status, error);
	goto out;
fail:
	events_abort();
	log_error("turn %s: its end could not be stored", tu->t->turn_id);
out:
	free(usage);
}

/* Insert a message row (role assistant or tool) in the open transaction. */
int
turn_message_insert(struct turn *tu, const char *id, const char *role,
    const char *content, const char *tool_calls, const char *tool_call_id,
    const char *ts)
{
	static const char *sql = "INSERT INTO messages (id, conversation_id, "
	    "seq, role, content, tool_calls, tool_call_id, turn_id, created_at) "
	    "VALUES (?1, ?2, (SELECT COALESCE(MAX(seq), 0) + 1 FROM messages "
	    "WHERE conversation_id = ?2), ?3, ?4, ?5, ?6, ?7, ?8)";
	sqlite3_stmt *st;

	if ((st = db_stmt(sql)) == NULL)
		return -1;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, tu->t->conv_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, role, -1, SQLITE_STATIC);
	if (content)
		sqlite3_bind_text(st, 4, content, -1, SQLITE_STATIC);
	if (tool_calls)
		sqlite3_bind_text(st, 5, tool_calls, -1, SQLITE_STATIC);
	if (tool_call_id)
		sqlite3_bind_text(st, 6, tool_call_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 7, tu->t->turn_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 8, ts, -1, SQLITE_STATIC);
	return turn_step_done(st, "message insert");
}

/* The assistant message and its message.created. calls may be NULL. */
static int
store_assistant(struct turn *tu, const char *text, struct json_object *calls)
{
	struct json_object	*msg, *data;
	const char		*cj = NULL;
	char			 id[ID_BUFSZ], ts[TIME_BUFSZ];

	random_id(id);
	time_rfc3339(ts, now_ms());
	if (calls)
		cj = json_object_to_json_string_ext(calls, JSON_C_TO_STRING_PLAIN);
	if (events_begin() == -1)
		return -1;
	if (turn_message_insert(tu, id, "assistant", text, cj, NULL, ts) == -1)
		goto fail;
	msg = json_object_new_object();
	json_object_object_add(msg, "id", json_object_new_string(id));
	json_object_object_add(msg, "role", json_object_new_string("assistant"));
	json_object_object_add(msg, "content", json_object_new_string(text));
	if (calls)
		json_object_object_add(msg, "tool_calls", json_object_get(calls));
	json_object_object_add(msg, "turn_id",
	    json_object_new_string(tu->t->turn_id));
	json_object_object_add(msg, "created_at", json_object_new_string(ts));
	data = json_object_new_object();
	json_object_object_add(data, "message", msg);
	if (turn_add_event(tu->t->conv_id, "message.created", data) == -1)
		goto fail;
	return events_commit();
fail:
	events_abort();
	return -1;
}

/* ---------------------------------------------------------- deltas */

static void
delta_flush(struct turn *tu)
{
	struct json_object *data;

	if (tu->plen == 0)
		return;
	data = turn_event_data(tu->t->turn_id);
	json_object_object_add(data, "text",
	    json_object_new_string_len(tu->pending, (int)tu->plen));
	if (events_append(tu->t->conv_id, "message.delta", data) == -1)
		log_error("turn %s: a delta could not be stored", tu->t->turn_id);
	json_object_put(data);
	tu->plen = 0;
	tu->last_flush = mono_ms();
}

/*
 * Coalescing without added delay for a slow stream: text is written at
 * once when the last write is engine.delta_flush_ms old, and otherwise
 * waits at most that long (or until 1 KiB is pending).
 */
static void
on_text(void *arg, const char *text, size_t len)
{
	struct turn *tu = arg;

	if (tu->plen + len + 1 > tu->pcap) {
		tu->pcap = (tu->plen + len + 1) * 2;
		tu->pending = xrealloc(tu->pending, tu->pcap);
	}
	memcpy(tu->pending + tu->plen, text, len);
	tu->plen += len;
	if (tu->plen >= DELTA_MAX ||
	    mono_ms() - tu->last_flush >= app.cfg.engine.delta_flush_ms)
		delta_flush(tu);
}

/* Flush what is due; say when the next flush would be. */
static int
on_tick(void *arg)
{
	struct turn	*tu = arg;
	int64_t		 age;

	if (tu->plen == 0)
		return -1;
	age = mono_ms() - tu->last_flush;
	if (age >= app.cfg.engine.delta_flush_ms) {
		delta_flush(tu);
		return -1;
	}
	return (int)(app.cfg.engine.delta_flush_ms - age);
}

/* ---------------------------------------------------------- the loop */

/* The request body of one model call; NULL on a storage error. */
static char *
request_body(struct turn *tu, const struct resolved_profile *p)
{
	struct json_object	*req, *msgs, *tools, *so;
	size_t			 budget, ttok;
	char			*out;

	if ((msgs = history_build(tu->t->conv_id,
	    app.cfg.engine.system_prompt)) == NULL)
		return NULL;
	tools = tools_request_json();
	ttok = history_tokens(tools);
	budget = (size_t)p->context_window;
	budget = budget > (size_t)p->max_output_tokens + ttok + MIN_BUDGET ?
	    budget - (size_t)p->max_output_tokens - ttok : MIN_BUDGET;
	history_trim(msgs, budget);
	req = json_object_new_object();
	json_object_object_add(req, "model", json_object_new_string(p->model));
	json_object_object_add(req, "messages", msgs);
	json_object_object_add(req, "tools", tools);
	json_object_object_add(req, "tool_choice", json_object_new_string("auto"));
	json_object_object_add(req, "stream", json_object_new_boolean(1));
	so = json_object_new_object();
	json_object_object_add(so, "include_usage", json_object_new_boolean(1));
	json_object_object_add(req, "stream_options", so);
	json_object_object_add(req, "max_tokens",
	    json_object_new_int(p->max_output_tokens));
	json_object_object_add(req, "temperature",
	    json_object_new_double(p->temperature));
	out = xstrdup(json_object_to_json_string_ext(req,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(req);
	return out;
}

static void
usage_add(struct turn *tu, const char *usage)
{
	static const char *keys[3] = { "prompt_tokens", "completion_tokens",
	    "total_tokens" };
	struct json_object	*o, *v;
	int			 i;

	if (usage == NULL || (o = json_tokener_parse(usage)) == NULL)
		return;
	for (i = 0; i < 3; i++)
		if (json_object_object_get_ex(o, keys[i], &v))
			tu->usage[i] += json_object_get_int64(v);
	tu->have_usage = 1;
	json_object_put(o);
}

/*
 * The calls as the assistant message stores them. Arguments that are not
 * JSON are kept as "{}" there (the tool.call event and the error result
 * show what the model sent), so the history stays acceptable to servers
 * that parse it.
 */
static struct json_object *
calls_json(const struct llm_stream *s)
{
	struct json_object	*arr = json_object_new_array(), *c, *fn, *p;
	size_t			 i;

	for (i = 0; i < s->ncalls; i++) {
		const char *args = s->calls[i].args ? s->calls[i].args : "";

		p = *args ? json_tokener_parse(args) : NULL;
		fn = json_object_new_object();
		json_object_object_add(fn, "name",
		    json_object_new_string(s->calls[i].name));
		json_object_object_add(fn, "arguments",
		    json_object_new_string(p ? args : "{}"));
		json_object_put(p);
		c = json_object_new_object();
		json_object_object_add(c, "id",
		    json_object_new_string(s->calls[i].id));
		json_object_object_add(c, "type", json_object_new_string("function"));
		json_object_object_add(c, "function", fn);
		json_object_array_add(arr, c);
	}
	return arr;
}

static const char *
conversation_model(const char *conv_id, char *buf, size_t len)
{
	static const char *sql = "SELECT model FROM conversations WHERE id = ?1";
	sqlite3_stmt	*st;
	const char	*m;

	buf[0] = '\0';
	if ((st = db_stmt(sql)) == NULL)
		return buf;
	sqlite3_bind_text(st, 1, conv_id, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW &&
	    (m = (const char *)sqlite3_column_text(st, 0)) != NULL)
		strlcpy_(buf, m, len);
	sqlite3_reset(st);
	return buf;
}

/* One model call and its tool calls. 1 answered, 0 go on, -1 ended. */
static int
step(struct turn *tu, const struct resolved_profile *p)
{
	struct llm_request	 rq;
	struct llm_stream	 s;
	struct json_object	*calls = NULL;
	enum llm_status		 st;
	char			*body, err[768];
	int			 http, rc = -1;
	size_t			 i;

	if ((body = request_body(tu, p)) == NULL) {
		turn_end(tu, "failed", "the conversation history could not be read");
		return -1;
	}
	memset(&rq, 0, sizeof(rq));
	rq.base_url = p->base_url;
	rq.api_key = p->api_key;
	rq.body = body;
	rq.body_len = strlen(body);
	rq.connect_timeout_s = app.cfg.engine.llm_connect_timeout_seconds;
	rq.idle_timeout_s = app.cfg.engine.llm_idle_timeout_seconds;
	rq.max_retries = app.cfg.engine.llm_max_retries;
	rq.cancel = &tu->t->abort;
	rq.on_text = on_text;
	rq.tick = on_tick;
	rq.arg = tu;
	tu->steps++;
	st = llm_chat(&rq, &s, &http, err, sizeof(err));
	free(body);
	delta_flush(tu);
	if (s.finish_reason[0])
		strlcpy_(tu->finish_reason, s.finish_reason,
		    sizeof(tu->finish_reason));
	usage_add(tu, s.usage);
	if (st != LLM_OK) {
		/* What the user already saw stays in the conversation. */
		if (s.textlen > 0 && !(tu->t->abort && !tu->t->cancelled))
			store_assistant(tu, s.text, NULL);
		if (st == LLM_CANCELLED) {
			if (tu->t->cancelled)
				turn_end(tu, "cancelled", NULL);
		} else
			turn_end(tu, "failed", err);
		goto out;
	}
	llm_stream_fix_ids(&s);
	if (s.ncalls > 0)
		calls = calls_json(&s);
	if (store_assistant(tu, s.text ? s.text : "", calls) == -1) {
		turn_end(tu, "failed", "the answer could not be stored");
		goto out;
	}
	if (s.ncalls == 0) {
		rc = 1;
		goto out;
	}
	for (i = 0; i < s.ncalls; i++) {
		if (tu->t->abort)
			break;
		if (turn_call_insert(tu, &s.calls[i], s.calls[i].args ?
		    s.calls[i].args : "") == -1) {
			turn_end(tu, "failed", "a tool call could not be stored");
			goto out;
		}
		if (turn_call_run(tu, &s.calls[i], s.calls[i].args) == -1)
			break;
	}
	if (tu->t->abort) {
		if (tu->t->cancelled)
			turn_end(tu, "cancelled", NULL);
		goto out;
	}
	rc = 0;
out:
	json_object_put(calls);
	llm_stream_free(&s);
	return rc;
}

void
turn_run(struct task *t)
{
	struct resolved_profile	 prof;
	struct turn		 tu;
	char			 model[128], err[512], msg[600];
	int			 rc;

	memset(&tu, 0, sizeof(tu));
	tu.t = t;
	tu.last_flush = mono_ms() - 1000000;
	if (t->abort) {
		if (t->cancelled)
			turn_end(&tu, "cancelled", NULL);
		return;
	}
	if ((rc = turn_begin(&tu)) != 0) {
		if (rc == -1)
			log_error("turn %s: cannot start", t->turn_id);
		return;		/* 1: cancelled before it started */
	}
	/* While the model thinks, the helper mounts the workspace. */
	sandbox_prepare(t->conv_id);
	conversation_model(t->conv_id, model, sizeof(model));
	if (profile_resolve(t->user_id, model, &prof, err, sizeof(err)) != 0) {
		snprintf(msg, sizeof(msg), "no usable model profile: %s", err);
		turn_end(&tu, "failed", msg);
		return;
	}
	for (;;) {
		if (t->abort) {
			if (t->cancelled)
				turn_end(&tu, "cancelled", NULL);
			break;
		}
		if (tu.steps >= app.cfg.engine.max_steps) {
			snprintf(msg, sizeof(msg), "the turn made %d model calls "
			    "(engine.max_steps) without a final answer",
			    tu.steps);
			turn_end(&tu, "failed", msg);
			break;
		}
		if ((rc = step(&tu, &prof)) == 1) {
			turn_end(&tu, "completed", NULL);
			break;
		}
		if (rc == -1)
			break;
	}
	profile_free(&prof);
	free(tu.pending);
}

int
turns_recover(void)
{
	static const char *sel = "SELECT id, conversation_id FROM turns WHERE "
	    "status IN ('queued', 'running')";
	static const char *upd = "UPDATE turns SET status = 'failed', error = "
	    "?2, updated_at = ?3 WHERE id = ?1";
	static const char *calls = "UPDATE tool_calls SET decision = 'deny', "
	    "decided_by = 'restart', decided_at = ?2 WHERE turn_id = ?1 AND "
	    "needs_approval = 1 AND decision IS NULL";
	static const char *why = "interrupted by server restart";
	struct json_object	*data;
	sqlite3_stmt		*st;
	char			 (*ids)[2][ID_BUFSZ] = NULL, ts[TIME_BUFSZ];
	size_t			 n = 0, cap = 0, i;
	int			 rc;

	if ((st = db_stmt(sel)) == NULL)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			ids = xrealloc(ids, cap * sizeof(*ids));
		}
		strlcpy_(ids[n][0], (const char *)sqlite3_column_text(st, 0),
		    ID_BUFSZ);
		strlcpy_(ids[n][1], (const char *)sqlite3_column_text(st, 1),
		    ID_BUFSZ);
		n++;
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		free(ids);
		return db_fail("interrupted turns");
	}
	time_rfc3339(ts, now_ms());
	for (i = 0; i < n; i++) {
		if (events_begin() == -1)
			goto fail;
		if ((st = db_stmt(upd)) == NULL)
			goto abort;
		sqlite3_bind_text(st, 1, ids[i][0], -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, why, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, ts, -1, SQLITE_STATIC);
		if (turn_step_done(st, "turn recovery") == -1)
			goto abort;
		if ((st = db_stmt(calls)) == NULL)
			goto abort;
		sqlite3_bind_text(st, 1, ids[i][0], -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, ts, -1, SQLITE_STATIC);
		if (turn_step_done(st, "approval recovery") == -1)
			goto abort;
		data = turn_event_data(ids[i][0]);
		json_object_object_add(data, "error", json_object_new_string(why));
		if (turn_add_event(ids[i][1], "turn.failed", data) == -1)
			goto abort;
		if (events_commit() == -1)
			goto fail;
	}
	if (n > 0)
		log_info("engine: %zu turn(s) interrupted by the restart marked "
		    "failed", n);
	free(ids);
	return 0;
abort:
	events_abort();
fail:
	free(ids);
	return -1;
}
