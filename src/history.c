/*
 * history.c — building and trimming what a model call sends. The stored
 * conversation may end anywhere (a cancelled turn, a restart between a tool
 * call and its result), so building repairs the pairing the chat format
 * requires instead of trusting it. Trimming estimates tokens as bytes / 4:
 * no tokenizer is shipped, and a rough, conservative count that never
 * sends too much is what matters (doc/architecture.md "Engine").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "db.h"
#include "history.h"
#include "util.h"

#define OPEN_CALLS_MAX	64
#define TOOL_KEEP	200	/* bytes a shortened tool output keeps */
#define NO_RESULT	"error: no result was recorded for this call (its " \
			"turn ended before the call ran)"

static struct json_object *
message(const char *role, const char *content)
{
	struct json_object *m = json_object_new_object();

	json_object_object_add(m, "role", json_object_new_string(role));
	json_object_object_add(m, "content",
	    content ? json_object_new_string(content) : NULL);
	return m;
}

struct open_calls {
	char	ids[OPEN_CALLS_MAX][72];
	size_t	n;
};

/* Give every still-open call a synthetic result. */
static void
close_calls(struct json_object *out, struct open_calls *oc)
{
	struct json_object	*m;
	size_t			 i;

	for (i = 0; i < oc->n; i++) {
		m = message("tool", NO_RESULT);
		json_object_object_add(m, "tool_call_id",
		    json_object_new_string(oc->ids[i]));
		json_object_array_add(out, m);
	}
	oc->n = 0;
}

static int
take_call(struct open_calls *oc, const char *id)
{
	size_t i;

	for (i = 0; i < oc->n; i++)
		if (strcmp(oc->ids[i], id) == 0) {
			oc->ids[i][0] = '\0';
			memmove(&oc->ids[i], &oc->ids[i + 1],
			    (oc->n - i - 1) * sizeof(oc->ids[0]));
			oc->n--;
			return 1;
		}
	return 0;
}

struct json_object *
history_build(const char *conv_id, const char *system_prompt)
{
	static const char *sql = "SELECT role, content, tool_calls, "
	    "tool_call_id FROM messages WHERE conversation_id = ?1 ORDER BY seq";
	struct json_object	*out, *m, *calls, *c, *id;
	struct open_calls	 oc;
	sqlite3_stmt		*st;
	size_t			 i, n;
	int			 rc;

	if ((st = db_stmt(sql)) == NULL)
		return NULL;
	sqlite3_bind_text(st, 1, conv_id, -1, SQLITE_STATIC);
	out = json_object_new_array();
	json_object_array_add(out, message("system", system_prompt));
	oc.n = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *role = (const char *)sqlite3_column_text(st, 0);
		const char *content = (const char *)sqlite3_column_text(st, 1);
		const char *tc = (const char *)sqlite3_column_text(st, 2);
		const char *tcid = (const char *)sqlite3_column_text(st, 3);

		if (strcmp(role, "tool") == 0) {
			/* A result whose call is not open is an orphan: dropped. */
			if (tcid == NULL || !take_call(&oc, tcid))
				continue;
			m = message("tool", content ? content : "");
			json_object_object_add(m, "tool_call_id",
			    json_object_new_string(tcid));
			json_object_array_add(out, m);
			continue;
		}
		close_calls(out, &oc);
		if (strcmp(role, "user") == 0) {
			json_object_array_add(out, message("user",
			    content ? content : ""));
			continue;
		}
		if (strcmp(role, "assistant") != 0)
			continue;
		calls = tc ? json_tokener_parse(tc) : NULL;
		if (calls && (!json_object_is_type(calls, json_type_array) ||
		    json_object_array_length(calls) == 0)) {
			json_object_put(calls);
			calls = NULL;
		}
		m = message("assistant", content && *content ? content :
		    (calls ? NULL : ""));
		if (calls) {
			n = json_object_array_length(calls);
			for (i = 0; i < n && oc.n < OPEN_CALLS_MAX; i++) {
				c = json_object_array_get_idx(calls, i);
				if (json_object_object_get_ex(c, "id", &id))
					strlcpy_(oc.ids[oc.n++],
					    json_object_get_string(id),
					    sizeof(oc.ids[0]));
			}
			json_object_object_add(m, "tool_calls", calls);
		}
		json_object_array_add(out, m);
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		db_fail("history");
		json_object_put(out);
		return NULL;
	}
	close_calls(out, &oc);
	return out;
}

size_t
history_tokens(struct json_object *msg)
{
	size_t len = 0;

	json_object_to_json_string_length(msg, JSON_C_TO_STRING_PLAIN, &len);
	return len / 4 + 4;
}

size_t
history_total(struct json_object *msgs)
{
	size_t i, n = json_object_array_length(msgs), t = 0;

	for (i = 0; i < n; i++)
		t += history_tokens(json_object_array_get_idx(msgs, i));
	return t;
}

static const char *
role_of(struct json_object *m)
{
	struct json_object *r;

	if (json_object_object_get_ex(m, "role", &r))
		return json_object_get_string(r);
	return "";
}

/* Index of the newest user message, or 0 when there is none. */
static size_t
newest_user(struct json_object *msgs)
{
	size_t i = json_object_array_length(msgs);

	while (i-- > 1)
		if (strcmp(role_of(json_object_array_get_idx(msgs, i)), "user") == 0)
			return i;
	return 0;
}

size_t
history_trim(struct json_object *msgs, size_t budget)
{
	struct json_object	*m, *c;
	const char		*s;
	size_t			 total = history_total(msgs), i, n, len, last, end;
	char			*cut;

	if (total <= budget)
		return total;
	/* 1. The oldest tool outputs, shortened one by one. */
	n = json_object_array_length(msgs);
	for (i = 1; i < n && total > budget; i++) {
		m = json_object_array_get_idx(msgs, i);
		if (strcmp(role_of(m), "tool") != 0 ||
		    !json_object_object_get_ex(m, "content", &c) ||
		    (s = json_object_get_string(c)) == NULL ||
		    (len = strlen(s)) <= TOOL_KEEP + 100)
			continue;
		total -= history_tokens(m);
		cut = xasprintf("%.*s\n[... %zu bytes of this output were "
		    "removed to fit the context window]", TOOL_KEEP, s,
		    len - TOOL_KEEP);
		json_object_object_add(m, "content", json_object_new_string(cut));
		free(cut);
		total += history_tokens(m);
	}
	/* 2. The oldest exchanges, whole, never the newest one. */
	while (total > budget) {
		last = newest_user(msgs);
		if (last <= 1)
			break;
		/* The exchange at 1 ends before the next user message. */
		n = json_object_array_length(msgs);
		for (end = 2; end < n; end++)
			if (strcmp(role_of(json_object_array_get_idx(msgs, end)),
			    "user") == 0)
				break;
		if (end > last)
			break;
		for (i = 1; i < end; i++)
			total -= history_tokens(json_object_array_get_idx(msgs, i));
		json_object_array_del_idx(msgs, 1, end - 1);
	}
	return total;
}
