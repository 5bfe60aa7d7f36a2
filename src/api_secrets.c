/*
 * api_secrets.c — the caller's secrets and model profiles over HTTP. Values
 * go in and never come out: listings carry names, times and flags, and a
 * profile says only whether it has an API key. Bodies are validated here;
 * sealing and storage are secrets.c's and profiles.c's.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "api.h"
#include "crypto.h"
#include "http.h"
#include "log.h"
#include "profiles.h"
#include "secrets.h"
#include "selfguard.h"

static void
bad_request(struct http_request *req, const char *msg)
{
	http_reply_error(req, 400, "bad_request", msg);
}

static int
name_checked(struct http_request *req, const char *name, const char *what)
{
	char msg[160];

	if (secret_name_valid(name))
		return 0;
	snprintf(msg, sizeof(msg), "A %s name is 1 to %d letters, digits, '_', "
	    "'.' or '-'.", what, SECRET_NAME_MAX);
	bad_request(req, msg);
	return -1;
}

void
api_secrets_list(struct http_request *req, const struct route_params *p,
    void *c)
{
	struct api_ctx		*ctx = c;
	struct vault_entry	*e;
	struct json_object	*arr, *it;
	size_t			 n, i;

	if (vault_list(ctx->user.id, VAULT_SECRET, &e, &n) == -1) {
		api_fail(req);
		return;
	}
	arr = json_object_new_array();
	for (i = 0; i < n; i++) {
		it = json_object_new_object();
		json_object_object_add(it, "name",
		    json_object_new_string(e[i].name));
		json_object_object_add(it, "updated_at",
		    json_object_new_string(e[i].updated_at));
		json_object_object_add(it, "env", json_object_new_boolean(e[i].env));
		if (e[i].error[0] != '\0')
			json_object_object_add(it, "error", json_object_new_string(
			    "This value cannot be decrypted with the configured "
			    "keys; store it again."));
		json_object_array_add(arr, it);
	}
	free(e);
	api_reply_list(req, "secrets", arr);
}

void
api_secrets_put(struct http_request *req, const struct route_params *p,
    void *c)
{
	struct api_ctx		*ctx = c;
	const char		*name = p->v[0], *value;
	struct json_object	*body, *v;
	bool			 env = false;
	size_t			 len;
	char			 msg[200];

	if (name_checked(req, name, "secret") == -1)
		return;
	if ((body = api_json_body(req)) == NULL)
		return;
	if (api_string_field(req, body, "value", true, SECRET_VALUE_MAX,
	    &value) == -1 || api_bool_field(req, body, "env", &env) == -1)
		goto out;
	json_object_object_get_ex(body, "value", &v);
	len = (size_t)json_object_get_string_len(v);
	if (len == 0 || strlen(value) != len) {
		bad_request(req, "The field 'value' must be a non-empty string "
		    "without NUL characters.");
		goto out;
	}
	if (env && !env_name_valid(name)) {
		bad_request(req, "A secret passed to commands (\"env\": true) "
		    "needs a variable name: a letter or '_', then letters, "
		    "digits or '_', not starting with LD_.");
		goto out;
	}
	if (env && len < SECRET_REDACT_MIN) {
		snprintf(msg, sizeof(msg), "A secret passed to commands must be "
		    "at least %d bytes long, so that it can be redacted from "
		    "their output.", SECRET_REDACT_MIN);
		bad_request(req, msg);
		goto out;
	}
	if (vault_put(ctx->user.id, VAULT_SECRET, name, value, len, env) == -1)
		api_fail(req);
	else
		http_reply_empty(req, 204);
out:
	json_object_put(body);
}

/* DELETE of one named item: 204, 404 for a bad name or an absent item. */
static void
delete_named(struct http_request *req, const char *user_id, const char *name,
    int (*del)(const char *, const char *))
{
	if (!secret_name_valid(name)) {
		api_not_found(req);
		return;
	}
	api_reply_done(req, del(user_id, name), 204);
}

static int
secret_delete(const char *user_id, const char *name)
{
	return vault_delete(user_id, VAULT_SECRET, name);
}

void
api_secrets_delete(struct http_request *req, const struct route_params *p,
    void *c)
{
	struct api_ctx *ctx = c;

	delete_named(req, ctx->user.id, p->v[0], secret_delete);
}

static struct json_object *
profile_to_json(const struct user_profile *u)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "name", json_object_new_string(u->name));
	json_object_object_add(o, "base_url", json_object_new_string(u->base_url));
	json_object_object_add(o, "model", json_object_new_string(u->model));
	json_object_object_add(o, "context_window",
	    json_object_new_int(u->context_window));
	json_object_object_add(o, "max_output_tokens",
	    json_object_new_int(u->max_output_tokens));
	json_object_object_add(o, "temperature",
	    json_object_new_double(u->temperature));
	json_object_object_add(o, "has_api_key",
	    json_object_new_boolean(u->has_api_key));
	json_object_object_add(o, "updated_at",
	    json_object_new_string(u->updated_at));
	return o;
}

void
api_profiles_list(struct http_request *req, const struct route_params *p,
    void *c)
{
	struct api_ctx		*ctx = c;
	struct user_profile	*u;
	struct json_object	*arr;
	size_t			 n, i;

	if (user_profile_list(ctx->user.id, &u, &n) == -1) {
		api_fail(req);
		return;
	}
	arr = json_object_new_array();
	for (i = 0; i < n; i++)
		json_object_array_add(arr, profile_to_json(&u[i]));
	free(u);
	api_reply_list(req, "profiles", arr);
}

/* An optional number field within min..max; 0 (absent keeps *out) / -1. */
static int
number_field(struct http_request *req, struct json_object *body,
    const char *key, double min, double max, bool integer, double *out)
{
	struct json_object	*v;
	double			 d;
	char			 msg[160];

	if (!json_object_object_get_ex(body, key, &v) || v == NULL)
		return 0;
	d = json_object_get_double(v);
	if ((!json_object_is_type(v, json_type_int) &&
	    !(json_object_is_type(v, json_type_double) && !integer)) ||
	    !isfinite(d) || d < min || d > max) {
		snprintf(msg, sizeof(msg), "The field '%s' must be %s from %g "
		    "to %g.", key, integer ? "an integer" : "a number", min, max);
		bad_request(req, msg);
		return -1;
	}
	*out = d;
	return 0;
}

void
api_profiles_put(struct http_request *req, const struct route_params *p,
    void *c)
{
	struct api_ctx		*ctx = c;
	struct user_profile	 u;
	struct json_object	*body, *k;
	const char		*url, *model, *key = NULL;
	double			 cw = 32768, mot = 4096, temp = 0.2;

	if (name_checked(req, p->v[0], "profile") == -1)
		return;
	if ((body = api_json_body(req)) == NULL)
		return;
	if (api_string_field(req, body, "base_url", true, PROFILE_URL_MAX,
	    &url) == -1 || api_string_field(req, body, "model", true,
	    PROFILE_MODEL_MAX, &model) == -1 ||
	    number_field(req, body, "context_window", 1, 16777216, true,
	    &cw) == -1 || number_field(req, body, "max_output_tokens", 1,
	    16777216, true, &mot) == -1 || number_field(req, body,
	    "temperature", 0, 2, false, &temp) == -1)
		goto out;
	if ((strncmp(url, "http://", 7) != 0 || url[7] == '\0') &&
	    (strncmp(url, "https://", 8) != 0 || url[8] == '\0')) {
		bad_request(req, "The field 'base_url' must be an http:// or "
		    "https:// URL.");
		goto out;
	}
	/* null or "" removes the key; absent keeps the stored one. */
	if (json_object_object_get_ex(body, "api_key", &k)) {
		if (k == NULL)
			key = "";
		else if (api_string_field(req, body, "api_key", true,
		    PROFILE_KEY_MAX, &key) == -1)
			goto out;
		else if (*key != '\0' && !profile_api_key_valid(key)) {
			bad_request(req, "The field 'api_key' must be printable "
			    "ASCII without spaces.");
			goto out;
		}
	}
	if (!profile_url_allowed(url)) {
		http_reply_error(req, 403, "forbidden", "This server only connects "
		    "to model endpoints its operator allows (llm.user_base_urls).");
		goto out;
	}
	memset(&u, 0, sizeof(u));
	strlcpy_(u.name, p->v[0], sizeof(u.name));
	strlcpy_(u.base_url, url, sizeof(u.base_url));
	strlcpy_(u.model, model, sizeof(u.model));
	u.context_window = (int)cw;
	u.max_output_tokens = (int)mot;
	u.temperature = temp;
	if (user_profile_put(ctx->user.id, &u, key) == -1)
		api_fail(req);
	else
		http_reply_empty(req, 204);
out:
	json_object_put(body);
}

void
api_profiles_delete(struct http_request *req, const struct route_params *p,
    void *c)
{
	struct api_ctx *ctx = c;

	delete_named(req, ctx->user.id, p->v[0], user_profile_delete);
}

#ifdef CDM_TEST_HOOKS
/*
 * Test builds only (./configure --enable-test-hooks): the server tries to
 * start a program and a process, and says what the kernel answered.
 */
void
api_test_exec(struct http_request *req, const struct route_params *p, void *c)
{
	struct selfguard_probe	 pr;
	struct json_object	*o = json_object_new_object();

	selfguard_probe(&pr);
	json_object_object_add(o, "execve", json_object_new_string(pr.execve));
	json_object_object_add(o, "execveat", json_object_new_string(pr.execveat));
	json_object_object_add(o, "fork", json_object_new_string(pr.fork));
	json_object_object_add(o, "vfork", json_object_new_string(pr.vfork));
	json_object_object_add(o, "clone3", json_object_new_string(pr.clone3));
	json_object_object_add(o, "thread", json_object_new_string(pr.thread));
	json_object_object_add(o, "read_outside",
	    json_object_new_string(pr.read_outside));
	http_reply_json(req, 200, o);
}
#endif
