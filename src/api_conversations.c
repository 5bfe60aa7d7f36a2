/*
 * api_conversations.c — conversation and message routes. Each handler starts
 * with the same ownership lookup, and a conversation that is not the
 * caller's gets the very answer a missing one gets.
 */
#include <string.h>
#include <json-c/json.h>

#include "api.h"
#include "approvals.h"
#include "conversations.h"
#include "db.h"
#include "engine.h"
#include "http.h"
#include "llm_stream.h"

/* 0 with c filled; otherwise the 404/500 has been sent. */
static int
own_conversation(struct http_request *req, const char *id,
    const struct api_ctx *ctx, struct conversation *c)
{
	int rc;

	if (!id_is_valid(id)) {
		api_not_found(req);
		return -1;
	}
	rc = conv_get_for_user(id, ctx->user.id, c);
	if (rc == 1)
		api_not_found(req);
	else if (rc == -1)
		api_fail(req);
	return rc == 0 ? 0 : -1;
}

void
api_conv_list(struct http_request *req, const struct route_params *p, void *c)
{
	struct api_ctx		*ctx = c;
	struct json_object	*arr;

	if ((arr = conv_list_for_user(ctx->user.id)) == NULL) {
		api_fail(req);
		return;
	}
	api_reply_list(req, "conversations", arr);
}

void
api_conv_create(struct http_request *req, const struct route_params *p,
    void *c)
{
	struct api_ctx		*ctx = c;
	struct json_object	*body = NULL;
	struct conversation	 conv;
	const char		*title = NULL, *model = NULL;

	/* The body is optional: an empty POST creates an untitled conversation. */
	if (req->body_len > 0) {
		if ((body = api_json_body(req)) == NULL)
			return;
		if (api_string_field(req, body, "title", false, TITLE_MAX, &title) == -1 ||
		    api_string_field(req, body, "model", false, MODEL_MAX, &model) == -1)
			goto out;
	}
	if (conv_create(ctx->user.id, title, model, &conv) == -1)
		api_fail(req);
	else
		http_reply_json(req, 201, conv_to_json(&conv));
out:
	json_object_put(body);
}

void
api_conv_get(struct http_request *req, const struct route_params *p, void *c)
{
	struct conversation conv;

	if (own_conversation(req, p->v[0], c, &conv) == 0)
		http_reply_json(req, 200, conv_to_json(&conv));
}

void
api_conv_patch(struct http_request *req, const struct route_params *p,
    void *c)
{
	struct api_ctx		*ctx = c;
	struct conversation	 conv;
	struct json_object	*body;
	const char		*title;
	int			 rc;

	if (own_conversation(req, p->v[0], c, &conv) == -1)
		return;
	if ((body = api_json_body(req)) == NULL)
		return;
	if (api_string_field(req, body, "title", true, TITLE_MAX, &title) == 0) {
		rc = conv_set_title(conv.id, ctx->user.id, title, &conv);
		if (rc == 0)
			http_reply_json(req, 200, conv_to_json(&conv));
		else if (rc == 1)
			api_not_found(req);
		else
			api_fail(req);
	}
	json_object_put(body);
}

void
api_conv_delete(struct http_request *req, const struct route_params *p,
    void *c)
{
	struct api_ctx		*ctx = c;
	struct conversation	 conv;

	if (own_conversation(req, p->v[0], c, &conv) == -1)
		return;
	api_reply_done(req, conv_delete(conv.id, ctx->user.id), 204);
}

void
api_messages_list(struct http_request *req, const struct route_params *p,
    void *c)
{
	struct conversation	 conv;
	struct json_object	*arr;

	if (own_conversation(req, p->v[0], c, &conv) == -1)
		return;
	if ((arr = messages_list(conv.id)) == NULL) {
		api_fail(req);
		return;
	}
	api_reply_list(req, "messages", arr);
}

void
api_messages_post(struct http_request *req, const struct route_params *p,
    void *c)
{
	struct conversation	 conv;
	struct json_object	*body, *o;
	const char		*content;
	char			 msg_id[ID_BUFSZ], turn_id[ID_BUFSZ];
	int			 rc;

	if (own_conversation(req, p->v[0], c, &conv) == -1)
		return;
	if ((body = api_json_body(req)) == NULL)
		return;
	if (api_string_field(req, body, "content", true, CONTENT_MAX, &content) == -1)
		goto out;
	rc = messages_post_user(conv.id, content, msg_id, turn_id);
	if (rc == 1) {
		http_reply_error(req, 409, "conflict",
		    "A turn of this conversation is still running.");
	} else if (rc == -1) {
		api_fail(req);
	} else {
		engine_enqueue(conv.id, turn_id, ((struct api_ctx *)c)->user.id);
		o = json_object_new_object();
		json_object_object_add(o, "turn_id", json_object_new_string(turn_id));
		json_object_object_add(o, "message_id", json_object_new_string(msg_id));
		http_reply_json(req, 202, o);
	}
out:
	json_object_put(body);
}

void
api_turn_cancel(struct http_request *req, const struct route_params *p,
    void *c)
{
	struct conversation	conv;
	int			rc;

	if (own_conversation(req, p->v[0], c, &conv) == -1)
		return;
	/* A turn the engine holds ends itself, with turn.cancelled. */
	if (!id_is_valid(p->v[1]))
		rc = 1;
	else if (engine_cancel(conv.id, p->v[1]))
		rc = 0;
	else
		rc = turn_cancel(conv.id, p->v[1]);
	api_reply_done(req, rc, 202);
}

/* Was a decision on this call of the conversation stored? 1 / 0 / -1. */
static int
call_decided(const char *conv_id, const char *call_id)
{
	static const char *sql = "SELECT 1 FROM tool_calls WHERE "
	    "conversation_id = ?1 AND call_id = ?2 AND needs_approval = 1 AND "
	    "decision IS NOT NULL LIMIT 1";
	sqlite3_stmt	*st;
	int		 rc;

	if ((st = db_stmt(sql)) == NULL)
		return -1;
	sqlite3_bind_text(st, 1, conv_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, call_id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc == SQLITE_ROW)
		return 1;
	return rc == SQLITE_DONE ? 0 : db_fail("approval lookup");
}

/*
 * The user's answer to approval.required. The waiting turn stores the
 * decision (with the user's id) and publishes approval.decided itself, so
 * the event follows the request in the turn's own order.
 */
void
api_approval(struct http_request *req, const struct route_params *p, void *c)
{
	struct api_ctx		*ctx = c;
	struct conversation	 conv;
	struct json_object	*body, *o;
	const char		*decision;
	int			 rc;

	if (own_conversation(req, p->v[0], c, &conv) == -1)
		return;
	if ((body = api_json_body(req)) == NULL)
		return;
	if (api_string_field(req, body, "decision", true, 16, &decision) == -1)
		goto out;
	if (strcmp(decision, "approve") != 0 && strcmp(decision, "deny") != 0) {
		http_reply_error(req, 400, "bad_request",
		    "decision must be \"approve\" or \"deny\".");
		goto out;
	}
	rc = llm_call_id_valid(p->v[1]) ? approval_submit(conv.id, p->v[1],
	    strcmp(decision, "approve") == 0, ctx->user.id) : 1;
	if (rc == 1 && llm_call_id_valid(p->v[1]))
		rc = call_decided(conv.id, p->v[1]) == 1 ? 2 : 1;
	if (rc == 0) {
		o = json_object_new_object();
		json_object_object_add(o, "call_id", json_object_new_string(p->v[1]));
		json_object_object_add(o, "decision", json_object_new_string(decision));
		http_reply_json(req, 200, o);
	} else if (rc == 2)
		http_reply_error(req, 409, "conflict",
		    "This call has already been decided.");
	else
		http_reply_error(req, 404, "not_found",
		    "No call of this conversation waits for a decision.");
out:
	json_object_put(body);
}

void
api_workspace_diff(struct http_request *req, const struct route_params *p,
    void *c)
{
	struct conversation conv;

	/* No workspace has been written yet, so the diff is empty. */
	if (own_conversation(req, p->v[0], c, &conv) == 0)
		http_reply(req, 200, "text/x-diff", NULL, "", 0);
}
