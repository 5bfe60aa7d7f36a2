/*
 * events.c — append and replay conversation events. The lock spans the whole
 * transaction and the publication after it: SQLite would serialise the
 * writers anyway, and holding it across the publish guarantees that live
 * subscribers see ids in increasing order. It does not decide which events
 * exist; callers (messages, turns) do.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "bus.h"
#include "db.h"
#include "events.h"
#include "log.h"
#include "sse.h"
#include "util.h"

struct pending {
	char	 conv_id[ID_BUFSZ + 8];
	int64_t	 id;
	char	*frame;
	size_t	 len;
};

#define PENDING_MAX	64	/* events one transaction may add */

static pthread_mutex_t	events_mu = PTHREAD_MUTEX_INITIALIZER;
static struct pending	pending[PENDING_MAX];	/* guarded by events_mu */
static size_t		npending;

static void
pending_clear(void)
{
	size_t i;

	for (i = 0; i < npending; i++)
		free(pending[i].frame);
	npending = 0;
}

int
events_begin(void)
{
	pthread_mutex_lock(&events_mu);
	npending = 0;
	if (db_begin() == -1) {
		pthread_mutex_unlock(&events_mu);
		return -1;
	}
	return 0;
}

int64_t
events_add(const char *conv_id, const char *type, struct json_object *data)
{
	static const char *bump = "UPDATE conversations SET last_event_id = "
	    "last_event_id + 1 WHERE id = ?1 RETURNING last_event_id";
	static const char *ins = "INSERT INTO events (conversation_id, id, type,"
	    " data, created_at) VALUES (?1, ?2, ?3, ?4, ?5)";
	sqlite3_stmt	*st;
	const char	*json;
	char		 ts[TIME_BUFSZ];
	int64_t		 id;
	size_t		 jlen;

	if (npending == PENDING_MAX) {
		log_error("%s: too many events in one transaction", __func__);
		return -1;
	}
	if ((st = db_stmt(bump)) == NULL)
		return -1;
	sqlite3_bind_text(st, 1, conv_id, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_ROW) {
		db_fail("event id");
		sqlite3_reset(st);
		return -1;
	}
	id = sqlite3_column_int64(st, 0);
	/* RETURNING rows are produced in full on the first step; finish it. */
	while (sqlite3_step(st) == SQLITE_ROW)
		;
	sqlite3_reset(st);

	json = json_object_to_json_string_length(data,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &jlen);
	time_rfc3339(ts, now_ms());
	if ((st = db_stmt(ins)) == NULL)
		return -1;
	sqlite3_bind_text(st, 1, conv_id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, id);
	sqlite3_bind_text(st, 3, type, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, json, (int)jlen, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, ts, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE) {
		db_fail("event insert");
		sqlite3_reset(st);
		return -1;
	}
	sqlite3_reset(st);

	if (sse_format_event(id, type, json, &pending[npending].frame,
	    &pending[npending].len) == -1)
		return -1;
	strlcpy_(pending[npending].conv_id, conv_id,
	    sizeof(pending[npending].conv_id));
	pending[npending].id = id;
	npending++;
	return id;
}

int
events_commit(void)
{
	size_t	i;

	if (db_commit() == -1) {
		pending_clear();
		pthread_mutex_unlock(&events_mu);
		return -1;
	}
	for (i = 0; i < npending; i++)
		bus_publish(pending[i].conv_id, pending[i].id, pending[i].frame,
		    pending[i].len);
	pending_clear();
	pthread_mutex_unlock(&events_mu);
	return 0;
}

void
events_abort(void)
{
	db_rollback();
	pending_clear();
	pthread_mutex_unlock(&events_mu);
}

int64_t
events_append(const char *conv_id, const char *type, struct json_object *data)
{
	int64_t id;

	if (events_begin() == -1)
		return -1;
	if ((id = events_add(conv_id, type, data)) == -1) {
		events_abort();
		return -1;
	}
	return events_commit() == 0 ? id : -1;
}

int
events_replay(const char *conv_id, int64_t after, int limit, events_fn fn,
    void *arg)
{
	static const char *sql = "SELECT id, type, data FROM events WHERE "
	    "conversation_id = ?1 AND id > ?2 ORDER BY id LIMIT ?3";
	sqlite3_stmt	*st;
	int		 n = 0, rc;

	if ((st = db_stmt(sql)) == NULL)
		return -1;
	sqlite3_bind_text(st, 1, conv_id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, after);
	sqlite3_bind_int(st, 3, limit);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		n++;
		if (fn(arg, sqlite3_column_int64(st, 0),
		    (const char *)sqlite3_column_text(st, 1),
		    (const char *)sqlite3_column_text(st, 2)) == -1)
			break;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		db_fail("event replay");
		sqlite3_reset(st);
		return -1;
	}
	sqlite3_reset(st);
	return n;
}
