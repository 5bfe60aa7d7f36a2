/*
 * api.c — routing and authentication for every request, and the small
 * helpers handlers share. Authentication happens here, once, before any
 * handler runs; a handler never sees an unauthenticated caller unless its
 * route is marked public.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <json-c/json.h>

#include "api.h"
#include "app.h"
#include "db.h"
#include "http.h"
#include "jwt.h"
#include "log.h"
#include "util.h"

enum { PUBLIC = 1, ADMIN = 2 };

static const struct route routes[] = {
	{ "GET",    "/api/health",			api_health, PUBLIC },
	{ "POST",   "/api/auth/login",			api_login, PUBLIC },
	{ "GET",    "/api/auth/me",			api_me, 0 },
	{ "POST",   "/api/users",			api_users_create, ADMIN },
	{ "GET",    "/api/admin/status",		api_admin_status, ADMIN },
	{ "GET",    "/api/conversations",		api_conv_list, 0 },
	{ "POST",   "/api/conversations",		api_conv_create, 0 },
	{ "GET",    "/api/conversations/{}",		api_conv_get, 0 },
	{ "PATCH",  "/api/conversations/{}",		api_conv_patch, 0 },
	{ "DELETE", "/api/conversations/{}",		api_conv_delete, 0 },
	{ "GET",    "/api/conversations/{}/messages",	api_messages_list, 0 },
	{ "POST",   "/api/conversations/{}/messages",	api_messages_post, 0 },
	{ "POST",   "/api/conversations/{}/turns/{}/cancel", api_turn_cancel, 0 },
	{ "POST",   "/api/conversations/{}/approvals/{}", api_approval, 0 },
	{ "GET",    "/api/conversations/{}/events",	api_events, 0 },
	{ "GET",    "/api/conversations/{}/workspace/diff", api_workspace_diff, 0 },
	{ "GET",    "/api/secrets",			api_secrets_list, 0 },
	{ "PUT",    "/api/secrets/{}",			api_secrets_put, 0 },
	{ "DELETE", "/api/secrets/{}",			api_secrets_delete, 0 },
	{ "GET",    "/api/profiles",			api_profiles_list, 0 },
	{ "PUT",    "/api/profiles/{}",			api_profiles_put, 0 },
	{ "DELETE", "/api/profiles/{}",			api_profiles_delete, 0 },
#ifdef CDM_TEST_HOOKS
	{ "POST",   "/api/admin/test/exec",		api_test_exec, ADMIN },
#endif
};

static int
public_path(const char *path)
{
	size_t i;

	for (i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
		if ((routes[i].flags & PUBLIC) && strcmp(routes[i].pattern, path) == 0)
			return 1;
	return 0;
}

#define UNAUTHORIZED_HDR "WWW-Authenticate: Bearer\r\n"

static void
unauthorized(struct http_request *req, const char *why)
{
	http_reply_error_h(req, 401, "unauthorized", why, UNAUTHORIZED_HDR);
}

/* 0 with ctx->user filled, or -1 with the 401 sent. */
static int
authenticate(struct http_request *req, struct api_ctx *ctx)
{
	const char		*h = http_param(req, "HTTP_AUTHORIZATION");
	struct jwt_claims	 claims;
	enum jwt_err		 e;
	int			 rc;

	if (h == NULL || strncasecmp(h, "Bearer ", 7) != 0 || h[7] == '\0') {
		unauthorized(req, "A bearer token is required.");
		return -1;
	}
	e = jwt_verify(h + 7, app.jwt_keys, app.jwt_keylens, app.n_jwt_keys,
	    now_ms() / 1000, &claims);
	if (e != JWT_OK) {
		log_info("token refused: %s", jwt_strerror(e));
		unauthorized(req, "The token is invalid or has expired.");
		return -1;
	}
	rc = users_get(claims.sub, &ctx->user);
	if (rc == 1) {
		unauthorized(req, "The token is invalid or has expired.");
		return -1;
	}
	if (rc == -1) {
		api_fail(req);
		return -1;
	}
	strlcpy_(req->user_id, ctx->user.id, sizeof(req->user_id));
	return 0;
}

void
api_handle(struct http_request *req)
{
	const struct route	*r;
	struct route_params	 params;
	struct api_ctx		 ctx;
	char			 allow[128], hdr[160];

	memset(&ctx, 0, sizeof(ctx));
	switch (router_match(routes, sizeof(routes) / sizeof(routes[0]),
	    req->method, req->path, &r, &params, allow, sizeof(allow))) {
	case ROUTE_NOT_FOUND:
	case ROUTE_BAD_METHOD:
		/*
		 * Only the public paths answer strangers; everywhere else the
		 * token comes first, so the route map cannot be probed without one.
		 */
		if (!public_path(req->path) && authenticate(req, &ctx) == -1)
			return;
		if (allow[0] == '\0') {
			http_reply_error(req, 404, "not_found", "No such resource.");
			return;
		}
		snprintf(hdr, sizeof(hdr), "Allow: %s\r\n", allow);
		http_reply_error_h(req, 405, "method_not_allowed",
		    "This method is not allowed on this resource.", hdr);
		return;
	case ROUTE_FOUND:
		break;
	}
	if (!(r->flags & PUBLIC) && authenticate(req, &ctx) == -1)
		return;
	if ((r->flags & ADMIN) && !ctx.user.is_admin) {
		http_reply_error(req, 403, "forbidden",
		    "This action needs an administrator.");
		return;
	}
	r->fn(req, &params, &ctx);
}

struct json_object *
api_json_body(struct http_request *req)
{
	const char		*ct = http_param(req, "CONTENT_TYPE");
	struct json_tokener	*tok;
	struct json_object	*obj;
	size_t			 len;

	len = strlen("application/json");
	if (ct == NULL || strncasecmp(ct, "application/json", len) != 0 ||
	    (ct[len] != '\0' && ct[len] != ';' && ct[len] != ' ')) {
		http_reply_error(req, 415, "unsupported_media_type",
		    "The body must be JSON (Content-Type: application/json).");
		return NULL;
	}
	if (req->body == NULL || req->body_len == 0) {
		http_reply_error(req, 400, "bad_request", "The body is empty.");
		return NULL;
	}
	if (strlen(req->body) != req->body_len) {
		http_reply_error(req, 400, "bad_request",
		    "The body contains a NUL byte.");
		return NULL;
	}
	/* Depth bound: a hostile body of nested brackets cannot exhaust the stack. */
	tok = json_tokener_new_ex(32);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	obj = json_tokener_parse_ex(tok, req->body, (int)req->body_len);
	if (obj == NULL || json_tokener_get_error(tok) != json_tokener_success ||
	    json_tokener_get_parse_end(tok) != req->body_len) {
		json_object_put(obj);
		json_tokener_free(tok);
		http_reply_error(req, 400, "bad_request",
		    "The body is not valid JSON.");
		return NULL;
	}
	json_tokener_free(tok);
	if (!json_object_is_type(obj, json_type_object)) {
		json_object_put(obj);
		http_reply_error(req, 400, "bad_request",
		    "The body must be a JSON object.");
		return NULL;
	}
	return obj;
}

int
api_string_field(struct http_request *req, struct json_object *obj,
    const char *key, bool required, size_t maxlen, const char **out)
{
	struct json_object	*v;
	char			 msg[160];

	*out = NULL;
	if (!json_object_object_get_ex(obj, key, &v) || v == NULL) {
		if (!required)
			return 0;
		snprintf(msg, sizeof(msg), "The field '%s' is required.", key);
		http_reply_error(req, 400, "bad_request", msg);
		return -1;
	}
	if (!json_object_is_type(v, json_type_string)) {
		snprintf(msg, sizeof(msg), "The field '%s' must be a string.", key);
		http_reply_error(req, 400, "bad_request", msg);
		return -1;
	}
	if ((size_t)json_object_get_string_len(v) > maxlen) {
		snprintf(msg, sizeof(msg), "The field '%s' is longer than %zu bytes.",
		    key, maxlen);
		http_reply_error(req, 400, "bad_request", msg);
		return -1;
	}
	*out = json_object_get_string(v);
	return 0;
}

int
api_bool_field(struct http_request *req, struct json_object *obj,
    const char *key, bool *out)
{
	struct json_object	*v;
	char			 msg[160];

	if (!json_object_object_get_ex(obj, key, &v) || v == NULL)
		return 0;
	if (!json_object_is_type(v, json_type_boolean)) {
		snprintf(msg, sizeof(msg), "The field '%s' must be true or false.", key);
		http_reply_error(req, 400, "bad_request", msg);
		return -1;
	}
	*out = json_object_get_boolean(v);
	return 0;
}

void
api_reply_list(struct http_request *req, const char *key,
    struct json_object *arr)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, key, arr);
	http_reply_json(req, 200, o);
}

void
api_fail(struct http_request *req)
{
	if (db_last_busy())
		http_reply_error(req, 503, "unavailable",
		    "The server is busy; try again shortly.");
	else
		http_reply_error(req, 500, "internal",
		    "The server failed to complete the request.");
}

void
api_not_found(struct http_request *req)
{
	http_reply_error(req, 404, "not_found", "No such resource.");
}

void
api_reply_done(struct http_request *req, int rc, int status)
{
	if (rc == 0)
		http_reply_empty(req, status);
	else if (rc == 1)
		api_not_found(req);
	else
		api_fail(req);
}
