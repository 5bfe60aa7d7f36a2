/*
 * config_keys.c — the table of configuration keys (keys[] below; the order
 * doc/configuration.md follows) and what each key's type accepts: parsing
 * and checking one scalar, storing it into its field, and the built-in
 * defaults, which go through the same parsers.
 *
 * It does not read files, the command line or the environment; config.c and
 * config_yaml.c bring the values here and word the errors.
 */
#include <sys/un.h>

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "config_keys.h"
#include "util.h"

#define C(f)	offsetof(struct config, f)
#define P(f)	offsetof(struct llm_profile, f)

/* Every key of the file. doc/configuration.md follows this order. */
static const struct key keys[] = {
	/* name				type		offset				min	max		default */
	{ "instance_dir",		K_PATH,		C(instance_dir),		0, 0,		"/var/lib/codumentor", NULL },
	{ "listen",			K_LISTEN,	C(listen),			0, 0,		"unix:/run/codumentor/fcgi.sock", NULL },
	{ "server.workers",		K_INT,		C(server.workers),		1, 1024,	"16", NULL },
	{ "server.max_streams",		K_INT,		C(server.max_streams),		1, 100000,	"4096", NULL },
	{ "server.heartbeat_seconds",	K_INT,		C(server.heartbeat_seconds),	1, 3600,	"15", NULL },
	{ "server.max_body_bytes",	K_LONG,		C(server.max_body_bytes),	1024, 1073741824, "1048576", NULL },
	{ "server.shutdown_grace_seconds", K_INT,	C(server.shutdown_grace_seconds), 0, 600,	"10", NULL },
	{ "server.socket_group",	K_STR,		C(server.socket_group),		0, 0,		"", NULL },
	{ "server.socket_mode",		K_MODE,		C(server.socket_mode),		0, 0,		"0660", NULL },
	{ "log.level",			K_ENUM,		C(log.level),			0, 0,		"info", "debug|info|warn|error" },
	{ "log.file",			K_PATH,		C(log.file),			0, 0,		"", NULL },
	{ "auth.jwt_secret",		K_SECRET,	C(auth.jwt_secret),		0, 0,		"", NULL },
	{ "auth.previous_jwt_secrets",	K_SECRET_LIST,	C(auth.previous_jwt_secrets),	0, 0,		"", NULL },
	{ "auth.token_ttl_minutes",	K_INT,		C(auth.token_ttl_minutes),	1, 525600,	"720", NULL },
	{ "auth.login_max_failures",	K_INT,		C(auth.login_max_failures),	1, 1000,	"5", NULL },
	{ "auth.login_lockout_seconds",	K_INT,		C(auth.login_lockout_seconds),	1, 86400,	"60", NULL },
	{ "llm.default_profile",	K_STR,		C(llm.default_profile),		0, 0,		"default", NULL },
	{ "llm.profiles",		K_PROFILES,	C(llm.profiles),		0, 0,		"default", NULL },
	{ "llm.user_base_urls",		K_STR,		C(llm.user_base_urls),		0, 0,		"", NULL },
	{ "tools.shell_always_allow",	K_BOOL,		C(tools.shell_always_allow),	0, 0,		"false", NULL },
	{ "tools.approval_timeout_seconds", K_INT,	C(tools.approval_timeout_seconds), 1, 86400,	"600", NULL },
	{ "tools.output_cap_bytes",	K_LONG,		C(tools.output_cap_bytes),	1024, 16777216,	"65536", NULL },
	{ "tools.shell_timeout_seconds", K_INT,		C(tools.shell_timeout_seconds),	1, 86400,	"300", NULL },
	{ "tools.approval_rules",	K_STR,		C(tools.approval_rules),	0, 0,		"", NULL },
	{ "engine.workers",		K_INT,		C(engine.workers),		1, 1024,	"8", NULL },
	{ "engine.max_steps",		K_INT,		C(engine.max_steps),		1, 1000,	"25", NULL },
	{ "engine.system_prompt",	K_STR,		C(engine.system_prompt),	0, 0,		"You are Codumentor, a careful coding assistant. You work in a workspace through tools: read_file, write_file, edit_file, list_dir, search_files and shell. Paths are relative to the workspace root. Shell commands may need the user's approval and run in a sandbox without network.", NULL },
	{ "engine.llm_connect_timeout_seconds", K_INT,	C(engine.llm_connect_timeout_seconds), 1, 600, "10", NULL },
	{ "engine.llm_idle_timeout_seconds", K_INT,	C(engine.llm_idle_timeout_seconds), 1, 3600,	"120", NULL },
	{ "engine.llm_max_retries",	K_INT,		C(engine.llm_max_retries),	0, 10,		"3", NULL },
	{ "engine.delta_flush_ms",	K_INT,		C(engine.delta_flush_ms),	0, 1000,	"20", NULL },
	{ "workspace_isolation.enabled", K_BOOL,	C(workspace_isolation.enabled),	0, 0,		"true", NULL },
	{ "workspace_isolation.base_dir", K_PATH,	C(workspace_isolation.base_dir), 0, 0,		"~/.codumentor/workspaces", NULL },
	{ "workspace_isolation.ttl_days", K_INT,	C(workspace_isolation.ttl_days), 1, 3650,	"30", NULL },
	{ "sandbox.unshare_net",	K_BOOL,		C(sandbox.unshare_net),		0, 0,		"true", NULL },
	{ "sandbox.seccomp",		K_ENUM,		C(sandbox.seccomp),		0, 0,		"default", "default|enforce|off" },
	{ "sandbox.seccomp_dir",	K_PATH,		C(sandbox.seccomp_dir),		0, 0,		CDM_SECCOMP_DIR, NULL },
	{ "sandbox.helper_path",	K_STR,		C(sandbox.helper_path),		0, 0,		"", NULL },
	{ "sandbox.bwrap_path",		K_PATH,		C(sandbox.bwrap_path),		0, 0,		"bwrap", NULL },
	{ "sandbox.env_passthrough",	K_STR,		C(sandbox.env_passthrough),	0, 0,		"", NULL },
	{ "sandbox.keep_mounted_seconds", K_INT,	C(sandbox.keep_mounted_seconds), 0, 3600,	"60", NULL },
	{ "security.no_exec",		K_BOOL,		C(security.no_exec),		0, 0,		"true", NULL },
	{ "security.landlock",		K_BOOL,		C(security.landlock),		0, 0,		"true", NULL },
};

/* The fields of one llm.profiles.NAME entry; missing fields take these. */
static const struct key profile_keys[] = {
	/* name				type		offset				min	max		default */
	{ "base_url",			K_URL,		P(base_url),			0, 0,		"http://127.0.0.1:8000/v1", NULL },
	{ "model",			K_STR,		P(model),			0, 0,		"", NULL },
	{ "api_key_env",		K_STR,		P(api_key_env),			0, 0,		"", NULL },
	{ "context_window",		K_INT,		P(context_window),		1, 16777216,	"32768", NULL },
	{ "max_output_tokens",		K_INT,		P(max_output_tokens),		1, 16777216,	"4096", NULL },
	{ "temperature",		K_DOUBLE,	P(temperature),			0, 2,		"0.2", NULL },
};

#undef C
#undef P

const struct table cfg_top_table = { keys, sizeof(keys) / sizeof(keys[0]) };
const struct table cfg_profile_table = {
	profile_keys, sizeof(profile_keys) / sizeof(profile_keys[0])
};

void
cfg_profile_free(struct llm_profile *p)
{
	free(p->name);
	free(p->base_url);
	free(p->model);
	free(p->api_key_env);
	memset(p, 0, sizeof(*p));
}

void
cfg_profiles_free(struct llm_profile *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		cfg_profile_free(&v[i]);
	free(v);
}

void
cfg_list_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

bool
cfg_type_is_string(enum ktype t)
{
	switch (t) {
	case K_STR:
	case K_SECRET:
	case K_PATH:
	case K_URL:
	case K_ENUM:
	case K_MODE:
	case K_LISTEN:
		return true;
	default:
		return false;
	}
}

const struct key *
cfg_table_find(const struct table *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (strcmp(t->keys[i].name, name) == 0)
			return &t->keys[i];
	return NULL;
}

/* A section ("server") is a prefix of at least one key ("server.workers"). */
bool
cfg_table_has_section(const struct table *t, const char *name)
{
	size_t i, len = strlen(name);

	for (i = 0; i < t->n; i++)
		if (strncmp(t->keys[i].name, name, len) == 0 &&
		    t->keys[i].name[len] == '.')
			return true;
	return false;
}

/* The sentence after "key 'x': " when a value does not fit its key. */
void
cfg_key_expected(const struct key *k, char *buf, size_t len)
{
	switch (k->type) {
	case K_STR:
	case K_SECRET:
	case K_PATH:
		snprintf(buf, len, "expected a string of at most %d bytes",
		    CONFIG_STR_MAX);
		break;
	case K_URL:
		snprintf(buf, len, "expected an http:// or https:// URL");
		break;
	case K_ENUM:
		snprintf(buf, len, "expected one of %s", k->choices);
		break;
	case K_MODE:
		snprintf(buf, len, "expected an octal mode from 0000 to 0777, "
		    "such as \"0660\"");
		break;
	case K_LISTEN:
		snprintf(buf, len, "expected unix:/PATH (at most %zu bytes) "
		    "or HOST:PORT", sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
		break;
	case K_INT:
	case K_LONG:
		snprintf(buf, len, "expected an integer between %lld and %lld",
		    k->min, k->max);
		break;
	case K_BOOL:
		snprintf(buf, len, "expected true or false");
		break;
	case K_DOUBLE:
		snprintf(buf, len, "expected a number between %lld and %lld",
		    k->min, k->max);
		break;
	case K_SECRET_LIST:
		snprintf(buf, len, "expected a list of at most %d non-empty "
		    "strings", CONFIG_LIST_MAX);
		break;
	case K_PROFILES:
		snprintf(buf, len, "expected a mapping of profile names to "
		    "profiles");
		break;
	}
}

/* Printable copy of untrusted text for an error message. */
void
cfg_text_show(char *dst, size_t dstlen, const char *s, size_t len)
{
	size_t i, o = 0;

	if (dstlen == 0)
		return;
	for (i = 0; i < len && o + 1 < dstlen; i++) {
		unsigned char c = (unsigned char)s[i];
		dst[o++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	dst[o] = '\0';
}

/*
 * prefix "." key into dst (just key when prefix is empty), cut short to fit;
 * false when cut. Dotted names are built here, not with snprintf, so a cut
 * is a value the caller sees rather than a compiler warning.
 */
bool
cfg_name_join(char *dst, size_t len, const char *prefix, const char *key)
{
	const char	*parts[3] = { prefix, *prefix ? "." : "", key };
	size_t		 i, o = 0;
	const char	*p;
	bool		 whole = true;

	if (len == 0)
		return false;
	for (i = 0; i < 3; i++)
		for (p = parts[i]; *p != '\0'; p++) {
			if (o + 1 >= len) {
				whole = false;
				break;
			}
			dst[o++] = *p;
		}
	dst[o] = '\0';
	return whole;
}

static bool
choice_valid(const char *choices, const char *s)
{
	const char	*p = choices, *bar;
	size_t		 n, len = strlen(s);

	while (*p != '\0') {
		bar = strchr(p, '|');
		n = bar ? (size_t)(bar - p) : strlen(p);
		if (n == len && strncmp(p, s, n) == 0)
			return true;
		if (bar == NULL)
			break;
		p = bar + 1;
	}
	return false;
}

/* "660" or "0660": three octal digits, optionally after a leading 0. */
static bool
mode_valid(const char *s)
{
	size_t i, len = strlen(s);

	if (len == 4 && s[0] == '0') {
		s++;
		len--;
	}
	if (len != 3)
		return false;
	for (i = 0; i < 3; i++)
		if (s[i] < '0' || s[i] > '7')
			return false;
	return true;
}

static bool
port_valid(const char *s)
{
	size_t	i;
	long	port = 0;

	for (i = 0; s[i] != '\0'; i++) {
		if (i >= 5 || s[i] < '0' || s[i] > '9')
			return false;
		port = port * 10 + (s[i] - '0');
	}
	return i > 0 && port >= 1 && port <= 65535;
}

/*
 * unix:/ABSOLUTE/PATH short enough for sun_path, or HOST:PORT where an IPv6
 * host is bracketed ("[::1]:9000") so the port is never ambiguous.
 */
static bool
listen_valid(const char *s)
{
	const char	*colon, *p;
	size_t		 hostlen;

	if (strncmp(s, "unix:/", 6) == 0)
		return strlen(s + 5) < sizeof(((struct sockaddr_un *)0)->sun_path);
	if ((colon = strrchr(s, ':')) == NULL || colon == s)
		return false;
	hostlen = (size_t)(colon - s);
	if (hostlen == 4 && strncmp(s, "unix", 4) == 0)
		return false;
	for (p = s; p < colon; p++)
		if (*p <= ' ' || *p == 0x7f || *p == '/')
			return false;
	if (memchr(s, ':', hostlen) != NULL &&
	    (s[0] != '[' || s[hostlen - 1] != ']'))
		return false;
	return port_valid(colon + 1);
}

static bool
url_valid(const char *s)
{
	if (strncmp(s, "http://", 7) == 0)
		return s[7] != '\0';
	if (strncmp(s, "https://", 8) == 0)
		return s[8] != '\0';
	return false;
}

/* The check every string type adds on top of "a string". */
bool
cfg_string_valid(const struct key *k, const char *s)
{
	switch (k->type) {
	case K_URL:
		return url_valid(s);
	case K_ENUM:
		return choice_valid(k->choices, s);
	case K_MODE:
		return mode_valid(s);
	case K_LISTEN:
		return listen_valid(s);
	default:
		return true;
	}
}

/*
 * [-+]?[0-9]+ within min..max. YAML 1.1's 0x1f and 1_000 are refused, and
 * 010 is ten: nobody means octal for a worker count.
 */
static int
parse_integer(const struct scalar *v, long long min, long long max,
    long long *out)
{
	char		 buf[32], *end;
	size_t		 i = 0;
	long long	 n;

	if (v->null || v->quoted || v->len == 0 || v->len >= sizeof(buf))
		return -1;
	memcpy(buf, v->text, v->len);
	buf[v->len] = '\0';
	if (buf[0] == '-' || buf[0] == '+')
		i++;
	if (buf[i] == '\0')
		return -1;
	for (; buf[i] != '\0'; i++)
		if (buf[i] < '0' || buf[i] > '9')
			return -1;
	errno = 0;
	n = strtoll(buf, &end, 10);
	if (errno != 0 || *end != '\0' || n < min || n > max)
		return -1;
	*out = n;
	return 0;
}

/* A decimal number; no hex floats, inf or nan. */
static int
parse_number(const struct scalar *v, long long min, long long max, double *out)
{
	char	 buf[64], *end;
	size_t	 i;
	double	 d;

	if (v->null || v->quoted || v->len == 0 || v->len >= sizeof(buf))
		return -1;
	memcpy(buf, v->text, v->len);
	buf[v->len] = '\0';
	for (i = 0; buf[i] != '\0'; i++)
		if (strchr("0123456789+-.eE", buf[i]) == NULL)
			return -1;
	errno = 0;
	d = strtod(buf, &end);
	if (errno != 0 || *end != '\0' || !isfinite(d) ||
	    d < (double)min || d > (double)max)
		return -1;
	*out = d;
	return 0;
}

char *
cfg_dup_len(const char *s, size_t len)
{
	char *p = xmalloc(len + 1);

	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

/*
 * Store one scalar into the field of k in base (a struct config or a struct
 * llm_profile). On -1 nothing changed; the caller words the error with
 * cfg_key_expected().
 */
int
cfg_scalar_store(void *base, const struct key *k, const struct scalar *v)
{
	void		*field = (char *)base + k->off;
	long long	 n;
	double		 d;
	char		*s;

	switch (k->type) {
	case K_INT:
		if (parse_integer(v, k->min, k->max, &n) == -1)
			return -1;
		*(int *)field = (int)n;
		return 0;
	case K_LONG:
		if (parse_integer(v, k->min, k->max, &n) == -1)
			return -1;
		*(long *)field = (long)n;
		return 0;
	case K_DOUBLE:
		if (parse_number(v, k->min, k->max, &d) == -1)
			return -1;
		*(double *)field = d;
		return 0;
	case K_BOOL:
		if (v->null || v->quoted)
			return -1;
		if (v->len == 4 && memcmp(v->text, "true", 4) == 0)
			*(bool *)field = true;
		else if (v->len == 5 && memcmp(v->text, "false", 5) == 0)
			*(bool *)field = false;
		else
			return -1;
		return 0;
	case K_SECRET_LIST:
	case K_PROFILES:
		return -1;	/* not scalars; see list_store, load_profiles */
	default:
		break;
	}

	/* The string types. A NUL inside would silently cut the value. */
	if (v->len > CONFIG_STR_MAX || memchr(v->text, '\0', v->len) != NULL)
		return -1;
	s = v->null ? xstrdup("") : cfg_dup_len(v->text, v->len);
	if (!cfg_string_valid(k, s)) {
		free(s);
		return -1;
	}
	if (k->type == K_MODE && strlen(s) == 3) {
		char *m = xmalloc(5);

		snprintf(m, 5, "0%s", s);
		free(s);
		s = m;
	}
	free(*(char **)field);
	*(char **)field = s;
	return 0;
}

/* Replace auth.previous_jwt_secrets with v (taken over, not copied). */
void
cfg_list_replace(struct config *cfg, char **v, size_t n)
{
	cfg_list_free(cfg->auth.previous_jwt_secrets,
	    cfg->auth.n_previous_jwt_secrets);
	cfg->auth.previous_jwt_secrets = v;
	cfg->auth.n_previous_jwt_secrets = n;
}

bool
cfg_list_item_valid(const char *s, size_t len)
{
	return len > 0 && len <= CONFIG_STR_MAX && memchr(s, '\0', len) == NULL;
}

/* --set form of a list: "a,b,c", or "" for none. Items are taken verbatim. */
int
cfg_list_store_csv(struct config *cfg, const char *text)
{
	char		**v;
	const char	 *p, *comma;
	size_t		  n = 0, len;

	if (*text == '\0') {
		cfg_list_replace(cfg, NULL, 0);
		return 0;
	}
	v = xcalloc(CONFIG_LIST_MAX, sizeof(*v));
	for (p = text;; p = comma + 1) {
		comma = strchr(p, ',');
		len = comma ? (size_t)(comma - p) : strlen(p);
		if (n == CONFIG_LIST_MAX || !cfg_list_item_valid(p, len)) {
			cfg_list_free(v, n);
			return -1;
		}
		v[n++] = cfg_dup_len(p, len);
		if (comma == NULL)
			break;
	}
	cfg_list_replace(cfg, v, n);
	return 0;
}

bool
cfg_profile_name_valid(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || len > PROFILE_NAME_MAX)
		return false;
	for (i = 0; i < len; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

/*
 * Defaults of every key of t into base (a zeroed struct). The built-in text
 * goes through the same parsers as the user's, so it must parse. The default
 * of llm.profiles is one profile of that name, its fields at their defaults.
 */
void
cfg_table_defaults(const struct table *t, void *base)
{
	const struct key	*k;
	struct config		*cfg;
	struct scalar		 v;
	size_t			 i;
	int			 rc;

	for (i = 0; i < t->n; i++) {
		k = &t->keys[i];
		switch (k->type) {
		case K_SECRET_LIST:
			rc = cfg_list_store_csv(base, k->def);
			break;
		case K_PROFILES:
			cfg = base;
			cfg->llm.profiles = xcalloc(1, sizeof(*cfg->llm.profiles));
			cfg->llm.n_profiles = 1;
			cfg_profile_init(&cfg->llm.profiles[0], k->def,
			    strlen(k->def));
			rc = 0;
			break;
		default:
			v.text = k->def;
			v.len = strlen(k->def);
			v.null = false;
			v.quoted = false;
			rc = cfg_scalar_store(base, k, &v);
			break;
		}
		if (rc == -1)
			abort();	/* a typo in the table, not a user error */
	}
}

void
cfg_profile_init(struct llm_profile *p, const char *name, size_t namelen)
{
	memset(p, 0, sizeof(*p));
	p->name = cfg_dup_len(name, namelen);
	cfg_table_defaults(&cfg_profile_table, p);
}
