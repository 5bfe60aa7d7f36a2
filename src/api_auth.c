/*
 * api_auth.c — health, login, the caller's identity, user creation by an
 * administrator, and the administrator's status view.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "api.h"
#include "app.h"
#include "bus.h"
#include "http.h"
#include "jwt.h"
#include "log.h"
#include "password.h"
#include "sandbox.h"
#include "server.h"
#include "stream.h"
#include "users.h"

void
api_health(struct http_request *req, const struct route_params *p, void *c)
{
	struct json_object *o = json_object_new_object(), *sb, *warn;
	char		    reason[256];
	int		    avail;

	json_object_object_add(o, "status", json_object_new_string("ok"));
	json_object_object_add(o, "version", json_object_new_string(CDM_VERSION));
	sb = json_object_new_object();
	avail = sandbox_available(reason, sizeof(reason));
	json_object_object_add(sb, "available", json_object_new_boolean(avail));
	json_object_object_add(sb, "reason",
	    json_object_new_string(avail ? "" : reason));
	json_object_object_add(o, "sandbox", sb);
	warn = json_object_new_array();
	if (app.jwt_ephemeral)
		json_object_array_add(warn, json_object_new_string(
		    "auth.jwt_secret is not set: tokens are signed with a "
		    "per-process key and stored secrets are not encrypted"));
	json_object_object_add(o, "warnings", warn);
	http_reply_json(req, 200, o);
}

static void
send_token(struct http_request *req, const struct user *u)
{
	struct json_object	*o;
	int64_t			 now = now_ms() / 1000;
	int64_t			 exp = now + (int64_t)app.cfg.auth.token_ttl_minutes * 60;
	char			*token, ts[TIME_BUFSZ];

	token = jwt_sign(app.jwt_keys[0], app.jwt_keylens[0], u->id, now, exp);
	if (token == NULL) {
		http_reply_error(req, 500, "internal", "Could not issue a token.");
		return;
	}
	time_rfc3339(ts, exp * 1000);
	o = json_object_new_object();
	json_object_object_add(o, "token", json_object_new_string(token));
	json_object_object_add(o, "expires_at", json_object_new_string(ts));
	json_object_object_add(o, "user", user_to_json(u));
	sodium_memzero(token, strlen(token));
	free(token);
	http_reply_json(req, 200, o);
}

void
api_login(struct http_request *req, const struct route_params *p, void *c)
{
	struct json_object	*body;
	const char		*name, *pw;
	struct user		 u;
	char			 hdr[64];
	int			 wait, rc;

	if ((body = api_json_body(req)) == NULL)
		return;
	if (api_string_field(req, body, "username", true, 256, &name) == -1 ||
	    api_string_field(req, body, "password", true, PASSWORD_MAX_LEN,
	    &pw) == -1)
		goto out;
	if ((wait = login_throttle_check(name, now_ms() / 1000)) > 0) {
		snprintf(hdr, sizeof(hdr), "Retry-After: %d\r\n", wait);
		http_reply_error_h(req, 429, "too_many_requests",
		    "Too many failed logins for this name; try again later.", hdr);
		goto out;
	}
	rc = username_is_valid(name) ? users_check_password(name, pw, &u) : 1;
	if (rc == -1) {
		api_fail(req);
		goto out;
	}
	if (rc == 1) {
		login_throttle_fail(name, now_ms() / 1000);
		log_info("login failed for a user name of %zu bytes", strlen(name));
		http_reply_error(req, 401, "unauthorized",
		    "Invalid username or password.");
		goto out;
	}
	login_throttle_success(name);
	strlcpy_(req->user_id, u.id, sizeof(req->user_id));
	send_token(req, &u);
out:
	json_object_put(body);
}

void
api_me(struct http_request *req, const struct route_params *p, void *c)
{
	struct api_ctx *ctx = c;

	http_reply_json(req, 200, user_to_json(&ctx->user));
}

void
api_users_create(struct http_request *req, const struct route_params *p,
    void *c)
{
	struct json_object	*body;
	const char		*name, *pw;
	bool			 admin = false;
	struct user		 u;
	int			 rc;

	if ((body = api_json_body(req)) == NULL)
		return;
	if (api_string_field(req, body, "username", true, USERNAME_MAX, &name) == -1 ||
	    api_string_field(req, body, "password", true, PASSWORD_MAX_LEN, &pw) == -1 ||
	    api_bool_field(req, body, "is_admin", &admin) == -1)
		goto out;
	if (!username_is_valid(name)) {
		http_reply_error(req, 400, "bad_request", "A user name is 1 to 64 "
		    "letters, digits, '.', '_', '-' or '@'.");
		goto out;
	}
	if (*pw == '\0') {
		http_reply_error(req, 400, "bad_request",
		    "The password must not be empty.");
		goto out;
	}
	rc = users_create(name, pw, admin, &u);
	if (rc == 1)
		http_reply_error(req, 409, "conflict",
		    "A user with this name already exists.");
	else if (rc == -1)
		api_fail(req);
	else
		http_reply_json(req, 201, user_to_json(&u));
out:
	json_object_put(body);
}

void
api_admin_status(struct http_request *req, const struct route_params *p,
    void *c)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "version", json_object_new_string(CDM_VERSION));
	json_object_object_add(o, "streams",
	    json_object_new_int(fcgi_stream_count()));
	json_object_object_add(o, "subscribers",
	    json_object_new_int(bus_subscriber_count()));
	json_object_object_add(o, "uptime_seconds",
	    json_object_new_int64((mono_ms() - app.started_ms) / 1000));
	http_reply_json(req, 200, o);
}
