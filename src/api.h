/*
 * api.h — the HTTP API: the route table, authentication of each request, and
 * the helpers handlers share to read JSON bodies and answer errors. The
 * handlers themselves live in api_auth.c, api_conversations.c, api_events.c.
 */
#ifndef CDM_API_H
#define CDM_API_H

#include <stdbool.h>
#include <stddef.h>

#include "router.h"
#include "users.h"

struct http_request;
struct json_object;

/* What a handler knows about its caller. */
struct api_ctx {
	struct user	user;		/* empty for public routes */
};

/* The FastCGI handler: route, authenticate, dispatch. */
void	api_handle(struct http_request *req);

/*
 * Parse the body as a JSON object. On failure the error answer (415 or 400)
 * has been sent and NULL is returned.
 */
struct json_object *api_json_body(struct http_request *req);

/*
 * Read a string member. required: absent is an error. On error a 400 naming
 * the field has been sent and -1 is returned; absent and optional gives 0
 * with *out NULL.
 */
int	api_string_field(struct http_request *req, struct json_object *obj,
	    const char *key, bool required, size_t maxlen, const char **out);
int	api_bool_field(struct http_request *req, struct json_object *obj,
	    const char *key, bool *out);

/* 200 {"KEY": ARR}: the shape of every list answer; takes ownership of arr. */
void	api_reply_list(struct http_request *req, const char *key,
	    struct json_object *arr);

/* Answer a failed storage call: 503 when the database was busy, else 500. */
void	api_fail(struct http_request *req);
void	api_not_found(struct http_request *req);
/*
 * The answer to a storage call that returns 0 done, 1 absent, -1 failed:
 * an empty reply with status, 404, or api_fail().
 */
void	api_reply_done(struct http_request *req, int rc, int status);

/* Handlers, grouped by file. */
void	api_health(struct http_request *, const struct route_params *, void *);
void	api_login(struct http_request *, const struct route_params *, void *);
void	api_me(struct http_request *, const struct route_params *, void *);
void	api_users_create(struct http_request *, const struct route_params *, void *);
void	api_admin_status(struct http_request *, const struct route_params *, void *);

void	api_conv_list(struct http_request *, const struct route_params *, void *);
void	api_conv_create(struct http_request *, const struct route_params *, void *);
void	api_conv_get(struct http_request *, const struct route_params *, void *);
void	api_conv_patch(struct http_request *, const struct route_params *, void *);
void	api_conv_delete(struct http_request *, const struct route_params *, void *);
void	api_messages_list(struct http_request *, const struct route_params *, void *);
void	api_messages_post(struct http_request *, const struct route_params *, void *);
void	api_turn_cancel(struct http_request *, const struct route_params *, void *);
void	api_approval(struct http_request *, const struct route_params *, void *);
void	api_workspace_diff(struct http_request *, const struct route_params *, void *);

void	api_events(struct http_request *, const struct route_params *, void *);

/* api_secrets.c: the caller's secrets and model profiles (values never out). */
void	api_secrets_list(struct http_request *, const struct route_params *, void *);
void	api_secrets_put(struct http_request *, const struct route_params *, void *);
void	api_secrets_delete(struct http_request *, const struct route_params *, void *);
void	api_profiles_list(struct http_request *, const struct route_params *, void *);
void	api_profiles_put(struct http_request *, const struct route_params *, void *);
void	api_profiles_delete(struct http_request *, const struct route_params *, void *);
#ifdef CDM_TEST_HOOKS
void	api_test_exec(struct http_request *, const struct route_params *, void *);
#endif

#endif
