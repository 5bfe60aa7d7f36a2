/*
 * request.c — what a server may ask of the helper: a SPAWN or PREPARE body
 * checked against the helper's fixed configuration before anything is
 * forked or mounted. Layers are absolute paths without '.', '..' or the
 * characters overlayfs's option syntax gives a meaning; all but the
 * read-only lower layer lie below the workspace base. argv and the extra
 * environment are bounded; the network only where the configuration allows
 * it. Everything else about a sandbox is spawn.c's to decide.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "helper.h"

void
spawn_req_free(struct spawn_req *r)
{
	char **p;

	free(r->lower);
	free(r->upper);
	free(r->work);
	free(r->merged);
	if (r->argv != NULL)
		for (p = r->argv; *p != NULL; p++)
			free(*p);
	free(r->argv);
	if (r->env != NULL)
		for (p = r->env; *p != NULL; p++)
			free(*p);
	free(r->env);
	memset(r, 0, sizeof(*r));
	r->out_fd = r->err_fd = -1;
}

/* A string member, without NULs, of at most max bytes; NULL otherwise. */
static const char *
get_str(struct json_object *o, const char *key, size_t max)
{
	struct json_object	*v;
	const char		*s;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	s = json_object_get_string(v);
	if ((size_t)json_object_get_string_len(v) != strlen(s) || strlen(s) > max)
		return NULL;
	return s;
}

/*
 * An absolute path without "." or ".." components, and without the
 * characters overlayfs's option syntax gives a meaning (',' ':' '\\').
 */
static int
path_ok(const char *p)
{
	const char *c;

	if (p == NULL || *p != '/' || strlen(p) >= SBX_PATH_MAX)
		return 0;
	if (strpbrk(p, ",:\\\n") != NULL)
		return 0;
	for (c = p; *c != '\0'; c++)
		if (c[0] == '/' && c[1] == '.' && (c[2] == '/' || c[2] == '\0' ||
		    (c[2] == '.' && (c[3] == '/' || c[3] == '\0'))))
			return 0;
	return 1;
}

/* p is strictly below dir. */
static int
path_below(const char *p, const char *dir)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	return strncmp(p, dir, n) == 0 && p[n] == '/' && p[n + 1] != '\0';
}

static int
env_name_ok(const char *s)
{
	size_t i;

	if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
		return 0;
	for (i = 1; s[i] != '\0'; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return 0;
	return i <= SBX_ENV_NAME_MAX;
}

static int
parse_argv(struct json_object *o, struct spawn_req *r, char *err, size_t len)
{
	struct json_object	*a, *v;
	size_t			 i, n;
	const char		*s;

	if (!json_object_object_get_ex(o, "argv", &a) ||
	    !json_object_is_type(a, json_type_array) ||
	    (n = json_object_array_length(a)) == 0 || n > SBX_ARGV_MAX)
		return helper_fail(err, len, "argv: expected 1 to %d strings",
		    SBX_ARGV_MAX);
	r->argv = calloc(n + 1, sizeof(char *));
	if (r->argv == NULL)
		abort();
	for (i = 0; i < n; i++) {
		v = json_object_array_get_idx(a, i);
		if (!json_object_is_type(v, json_type_string))
			return helper_fail(err, len, "argv[%zu]: expected a string", i);
		s = json_object_get_string(v);
		if ((size_t)json_object_get_string_len(v) != strlen(s))
			return helper_fail(err, len, "argv[%zu]: contains a NUL byte", i);
		if (i == 0 && *s == '\0')
			return helper_fail(err, len, "argv[0]: empty command name");
		r->argv[i] = helper_strdup(s);
	}
	return 0;
}

static int
parse_env(struct json_object *o, struct spawn_req *r, char *err, size_t len)
{
	struct json_object	*a, *pair, *k, *v;
	size_t			 i, n = 0, klen, vlen;
	const char		*ks, *vs;

	if (json_object_object_get_ex(o, "env", &a)) {
		if (!json_object_is_type(a, json_type_array) ||
		    (n = json_object_array_length(a)) > SBX_ENV_MAX)
			return helper_fail(err, len, "env: expected at most %d pairs",
			    SBX_ENV_MAX);
	}
	r->env = calloc(n + 1, sizeof(char *));
	if (r->env == NULL)
		abort();
	for (i = 0; i < n; i++) {
		pair = json_object_array_get_idx(a, i);
		if (!json_object_is_type(pair, json_type_array) ||
		    json_object_array_length(pair) != 2 ||
		    !json_object_is_type(k = json_object_array_get_idx(pair, 0),
		    json_type_string) ||
		    !json_object_is_type(v = json_object_array_get_idx(pair, 1),
		    json_type_string))
			return helper_fail(err, len, "env[%zu]: expected [name, value]", i);
		ks = json_object_get_string(k);
		vs = json_object_get_string(v);
		klen = strlen(ks);
		vlen = strlen(vs);
		if ((size_t)json_object_get_string_len(k) != klen ||
		    !env_name_ok(ks))
			return helper_fail(err, len, "env[%zu]: not a variable name", i);
		if ((size_t)json_object_get_string_len(v) != vlen ||
		    vlen > SBX_ENV_VALUE_MAX)
			return helper_fail(err, len, "env[%zu]: value has a NUL byte or "
			    "is longer than %d bytes", i, SBX_ENV_VALUE_MAX);
		if ((r->env[i] = malloc(klen + vlen + 2)) == NULL)
			abort();
		snprintf(r->env[i], klen + vlen + 2, "%s=%s", ks, vs);
	}
	return 0;
}

int
spawn_parse_layers(const struct helper_conf *c, struct json_object *o,
    struct spawn_req *r, char *err, size_t len)
{
	const char	*p[4];
	const char	*names[4] = { "lower", "upper", "work", "merged" };
	int		 i;

	memset(r, 0, sizeof(*r));
	r->out_fd = r->err_fd = -1;
	if (!json_object_is_type(o, json_type_object))
		return helper_fail(err, len, "expected a JSON object");
	for (i = 0; i < 4; i++) {
		p[i] = get_str(o, names[i], SBX_PATH_MAX - 1);
		if (!path_ok(p[i]))
			return helper_fail(err, len, "%s: expected an absolute path "
			    "without '.', '..', ',', ':' or '\\'", names[i]);
		/* Only the read-only lower layer may be outside the base. */
		if (i > 0 && !path_below(p[i], c->base))
			return helper_fail(err, len, "%s: %s is not below the "
			    "workspace base %s", names[i], p[i], c->base);
	}
	r->lower = helper_strdup(p[0]);
	r->upper = helper_strdup(p[1]);
	r->work = helper_strdup(p[2]);
	r->merged = helper_strdup(p[3]);
	return 0;
}

int
spawn_parse(const struct helper_conf *c, struct json_object *o,
    struct spawn_req *r, char *err, size_t len)
{
	struct json_object	*v;
	const char		*prof;

	if (spawn_parse_layers(c, o, r, err, len) == -1)
		return -1;
	if ((prof = get_str(o, "profile", 32)) == NULL ||
	    strcmp(prof, "shell") != 0)
		return helper_fail(err, len, "profile: only \"shell\" is known");
	if (parse_argv(o, r, err, len) == -1 || parse_env(o, r, err, len) == -1)
		return -1;
	if (json_object_object_get_ex(o, "net", &v)) {
		if (!json_object_is_type(v, json_type_boolean))
			return helper_fail(err, len, "net: expected true or false");
		r->net = json_object_get_boolean(v);
	}
	if (json_object_object_get_ex(o, "hold", &v)) {
		if (!json_object_is_type(v, json_type_boolean))
			return helper_fail(err, len, "hold: expected true or false");
		r->hold = json_object_get_boolean(v);
	}
	if (r->net && !c->allow_net)
		return helper_fail(err, len, "net: the network is not allowed by the "
		    "configuration (sandbox.unshare_net)");
	if (json_object_object_get_ex(o, "timeout_ms", &v)) {
		if (!json_object_is_type(v, json_type_int) ||
		    json_object_get_int64(v) < 0 ||
		    json_object_get_int64(v) > 7LL * 24 * 3600 * 1000)
			return helper_fail(err, len, "timeout_ms: expected 0 to a week");
		r->timeout_ms = json_object_get_int64(v);
	}
	return 0;
}
