/*
 * conversations.c — conversation and message rows. Every query that reads or
 * changes a conversation carries the owner in its WHERE clause, so ownership
 * cannot be forgotten by a caller. Turn execution is not here (engine).
 */
#include <string.h>
#include <json-c/json.h>

#include "bus.h"
#include "conversations.h"
#include "db.h"
#include "events.h"
#include "log.h"

static void
row_to_conv(sqlite3_stmt *st, struct conversation *c)
{
	const char *model = (const char *)sqlite3_column_text(st, 3);

	strlcpy_(c->id, (const char *)sqlite3_column_text(st, 0), sizeof(c->id));
	strlcpy_(c->user_id, (const char *)sqlite3_column_text(st, 1),
	    sizeof(c->user_id));
	strlcpy_(c->title, (const char *)sqlite3_column_text(st, 2),
	    sizeof(c->title));
	strlcpy_(c->model, model ? model : "", sizeof(c->model));
	strlcpy_(c->created_at, (const char *)sqlite3_column_text(st, 4),
	    sizeof(c->created_at));
	strlcpy_(c->updated_at, (const char *)sqlite3_column_text(st, 5),
	    sizeof(c->updated_at));
}

#define CONV_COLUMNS "id, user_id, title, model, created_at, updated_at"

int
conv_create(const char *user_id, const char *title, const char *model,
    struct conversation *out)
{
	static const char *sql = "INSERT INTO conversations (" CONV_COLUMNS
	    ") VALUES (?1, ?2, ?3, ?4, ?5, ?5)";
	sqlite3_stmt *st;

	memset(out, 0, sizeof(*out));
	random_id(out->id);
	strlcpy_(out->user_id, user_id, sizeof(out->user_id));
	strlcpy_(out->title, title ? title : "", sizeof(out->title));
	strlcpy_(out->model, model ? model : "", sizeof(out->model));
	time_rfc3339(out->created_at, now_ms());
	memcpy(out->updated_at, out->created_at, sizeof(out->updated_at));
	if ((st = db_stmt(sql)) == NULL)
		return -1;
	sqlite3_bind_text(st, 1, out->id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, user_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, out->title, -1, SQLITE_STATIC);
	if (model && *model)
		sqlite3_bind_text(st, 4, out->model, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, out->created_at, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE) {
		db_fail("conversation insert");
		sqlite3_reset(st);
		return -1;
	}
	sqlite3_reset(st);
	return 0;
}

int
conv_get_for_user(const char *id, const char *user_id,
    struct conversation *out)
{
	static const char *sql = "SELECT " CONV_COLUMNS " FROM conversations "
	    "WHERE id = ?1 AND user_id = ?2";
	sqlite3_stmt	*st;
	int		 rc;

	if ((st = db_stmt(sql)) == NULL)
		return -1;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, user_id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		row_to_conv(st, out);
	sqlite3_reset(st);
	if (rc == SQLITE_ROW)
		return 0;
	if (rc == SQLITE_DONE)
		return 1;
	return db_fail("conversation lookup");
}

struct json_object *
conv_to_json(const struct conversation *c)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "id", json_object_new_string(c->id));
	json_object_object_add(o, "title", json_object_new_string(c->title));
	json_object_object_add(o, "model", c->model[0] ?
	    json_object_new_string(c->model) : NULL);
	json_object_object_add(o, "created_at",
	    json_object_new_string(c->created_at));
	json_object_object_add(o, "updated_at",
	    json_object_new_string(c->updated_at));
	return o;
}

struct json_object *
conv_list_for_user(const char *user_id)
{
	static const char *sql = "SELECT " CONV_COLUMNS " FROM conversations "
	    "WHERE user_id = ?1 ORDER BY updated_at DESC, id LIMIT 1000";
	struct json_object	*arr;
	struct conversation	 c;
	sqlite3_stmt		*st;
	int			 rc;

	if ((st = db_stmt(sql)) == NULL)
		return NULL;
	sqlite3_bind_text(st, 1, user_id, -1, SQLITE_STATIC);
	arr = json_object_new_array();
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		row_to_conv(st, &c);
		json_object_array_add(arr, conv_to_json(&c));
	}
	if (rc != SQLITE_DONE) {
		db_fail("conversation list");
		sqlite3_reset(st);
		json_object_put(arr);
		return NULL;
	}
	sqlite3_reset(st);
	return arr;
}

int
conv_set_title(const char *id, const char *user_id, const char *title,
    struct conversation *out)
{
	static const char *sql = "UPDATE conversations SET title = ?3, "
	    "updated_at = ?4 WHERE id = ?1 AND user_id = ?2";
	sqlite3_stmt	*st;
	char		 ts[TIME_BUFSZ];

	time_rfc3339(ts, now_ms());
	if ((st = db_stmt(sql)) == NULL)
		return -1;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, user_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, title, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, ts, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE) {
		db_fail("conversation update");
		sqlite3_reset(st);
		return -1;
	}
	sqlite3_reset(st);
	if (sqlite3_changes(db_conn()) == 0)
		return 1;
	return conv_get_for_user(id, user_id, out);
}

int
conv_delete(const char *id, const char *user_id)
{
	static const char *sql = "DELETE FROM conversations WHERE id = ?1 AND "
	    "user_id = ?2";
	sqlite3_stmt *st;

	if ((st = db_stmt(sql)) == NULL)
		return -1;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, user_id, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE) {
		db_fail("conversation delete");
		sqlite3_reset(st);
		return -1;
	}
	sqlite3_reset(st);
	if (sqlite3_changes(db_conn()) == 0)
		return 1;
	/* Open streams of a deleted conversation end now. */
	bus_close(id);
	return 0;
}

struct json_object *
messages_list(const char *conv_id)
{
	static const char *sql = "SELECT id, role, content, tool_calls, "
	    "tool_call_id, created_at FROM messages WHERE conversation_id = ?1 "
	    "ORDER BY seq";
	struct json_object	*arr, *m;
	sqlite3_stmt		*st;
	int			 rc;

	if ((st = db_stmt(sql)) == NULL)
		return NULL;
	sqlite3_bind_text(st, 1, conv_id, -1, SQLITE_STATIC);
	arr = json_object_new_array();
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *content = (const char *)sqlite3_column_text(st, 2);
		const char *calls = (const char *)sqlite3_column_text(st, 3);
		const char *call_id = (const char *)sqlite3_column_text(st, 4);

		m = json_object_new_object();
		json_object_object_add(m, "id", json_object_new_string(
		    (const char *)sqlite3_column_text(st, 0)));
		json_object_object_add(m, "role", json_object_new_string(
		    (const char *)sqlite3_column_text(st, 1)));
		json_object_object_add(m, "content",
		    content ? json_object_new_string(content) : NULL);
		if (calls)
			json_object_object_add(m, "tool_calls",
			    json_tokener_parse(calls));
		if (call_id)
			json_object_object_add(m, "tool_call_id",
			    json_object_new_string(call_id));
		json_object_object_add(m, "created_at", json_object_new_string(
		    (const char *)sqlite3_column_text(st, 5)));
		json_object_array_add(arr, m);
	}
	if (rc != SQLITE_DONE) {
		db_fail("message list");
		sqlite3_reset(st);
		json_object_put(arr);
		return NULL;
	}
	sqlite3_reset(st);
	return arr;
}

/* 1 when a turn of the conversation is running or queued. */
static int
turn_active(const char *conv_id)
{
	static const char *sql = "SELECT 1 FROM turns WHERE conversation_id = ?1"
	    " AND status IN ('queued', 'running') LIMIT 1";
	sqlite3_stmt	*st;
	int		 rc;

	if ((st = db_stmt(sql)) == NULL)
		return -1;
	sqlite3_bind_text(st, 1, conv_id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc == SQLITE_ROW)
		return 1;
	return rc == SQLITE_DONE ? 0 : db_fail("turn lookup");
}

int
messages_post_user(const char *conv_id, const char *content,
    char message_id[ID_BUFSZ], char turn_id[ID_BUFSZ])
{
	static const char *ins_msg = "INSERT INTO messages (id, conversation_id,"
	    " seq, role, content, turn_id, created_at) VALUES (?1, ?2, "
	    "(SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE "
	    "conversation_id = ?2), 'user', ?3, ?4, ?5)";
	static const char *ins_turn = "INSERT INTO turns (id, conversation_id, "
	    "status, created_at, updated_at) VALUES (?1, ?2, 'queued', ?3, ?3)";
	static const char *touch = "UPDATE conversations SET updated_at = ?2 "
	    "WHERE id = ?1";
	struct json_object	*data, *msg;
	sqlite3_stmt		*st;
	char			 ts[TIME_BUFSZ];
	int			 rc;

	random_id(message_id);
	random_id(turn_id);
	time_rfc3339(ts, now_ms());
	if (events_begin() == -1)
		return -1;
	if ((rc = turn_active(conv_id)) != 0)
		goto abort;
	rc = -1;
	if ((st = db_stmt(ins_msg)) == NULL)
		goto abort;
	sqlite3_bind_text(st, 1, message_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, conv_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, content, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, turn_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, ts, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE) {
		db_fail("message insert");
		sqlite3_reset(st);
		goto abort;
	}
	sqlite3_reset(st);
	if ((st = db_stmt(ins_turn)) == NULL)
		goto abort;
	sqlite3_bind_text(st, 1, turn_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, conv_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, ts, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE) {
		db_fail("turn insert");
		sqlite3_reset(st);
		goto abort;
	}
	sqlite3_reset(st);
	if ((st = db_stmt(touch)) == NULL)
		goto abort;
	sqlite3_bind_text(st, 1, conv_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, ts, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE) {
		db_fail("conversation touch");
		sqlite3_reset(st);
		goto abort;
	}
	sqlite3_reset(st);

	msg = json_object_new_object();
	json_object_object_add(msg, "id", json_object_new_string(message_id));
	json_object_object_add(msg, "role", json_object_new_string("user"));
	json_object_object_add(msg, "content", json_object_new_string(content));
	json_object_object_add(msg, "turn_id", json_object_new_string(turn_id));
	json_object_object_add(msg, "created_at", json_object_new_string(ts));
	data = json_object_new_object();
	json_object_object_add(data, "message", msg);
	if (events_add(conv_id, "message.created", data) == -1) {
		json_object_put(data);
		goto abort;
	}
	json_object_put(data);
	return events_commit();
abort:
	events_abort();
	return rc;
}

int
turn_cancel(const char *conv_id, const char *turn_id)
{
	static const char *sel = "SELECT status FROM turns WHERE id = ?1 AND "
	    "conversation_id = ?2";
	static const char *upd = "UPDATE turns SET status = 'cancelled', "
	    "updated_at = ?2 WHERE id = ?1";
	struct json_object	*data;
	sqlite3_stmt		*st;
	char			 ts[TIME_BUFSZ], status[16] = "";
	int			 rc;

	if (events_begin() == -1)
		return -1;
	if ((st = db_stmt(sel)) == NULL)
		goto fail;
	sqlite3_bind_text(st, 1, turn_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, conv_id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		strlcpy_(status, (const char *)sqlite3_column_text(st, 0),
		    sizeof(status));
	sqlite3_reset(st);
	if (rc == SQLITE_DONE) {
		events_abort();
		return 1;
	}
	if (rc != SQLITE_ROW) {
		db_fail("turn lookup");
		goto fail;
	}
	/* Cancelling a finished turn changes nothing and is not an error. */
	if (strcmp(status, "queued") != 0 && strcmp(status, "running") != 0) {
		events_abort();
		return 0;
	}
	time_rfc3339(ts, now_ms());
	if ((st = db_stmt(upd)) == NULL)
		goto fail;
	sqlite3_bind_text(st, 1, turn_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, ts, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE) {
		db_fail("turn cancel");
		sqlite3_reset(st);
		goto fail;
	}
	sqlite3_reset(st);
	data = json_object_new_object();
	json_object_object_add(data, "turn_id", json_object_new_string(turn_id));
	rc = events_add(conv_id, "turn.cancelled", data) == -1 ? -1 : 0;
	json_object_put(data);
	if (rc == -1)
		goto fail;
	return events_commit();
fail:
	events_abort();
	return -1;
}
