/*
 * config.c — the configuration: built-in defaults, one YAML file read with
 * libyaml's document API, and `--set KEY=VALUE` overrides, all driven by one
 * table of keys (keys[] below), so the file, the command line and
 * doc/configuration.md describe the same thing.
 *
 * It only parses, checks and stores values. It does not open sockets, create
 * directories, resolve groups or look up API keys; the only thing it reads
 * from the environment is CODUMENTOR_JWT_SECRET and $HOME (for "~/").
 */
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <yaml.h>

#include "config.h"
#include "util.h"

#define CONFIG_FILE_MAX		(1024 * 1024)	/* bytes of YAML we read */
#define CONFIG_STR_MAX		4096		/* any string value */
#define CONFIG_LIST_MAX		16		/* previous_jwt_secrets */
#define CONFIG_PROFILES_MAX	64
#define PROFILE_NAME_MAX	64
#define KEY_NAME_MAX		160		/* a dotted key, as printed */
#define SHOWN_VALUE_MAX		64		/* of a --set value, in errors */
#define JWT_SECRET_ENV		"CODUMENTOR_JWT_SECRET"
#define PROFILES_PREFIX		"llm.profiles."

/*
 * A key's type says which values it accepts; string-valued types differ
 * only in their checks, so a typo in a mode or an address is reported with
 * the file and line instead of failing later at bind() or chmod().
 */
enum ktype {
	K_STR,		/* any string */
	K_SECRET,	/* a string never echoed in error messages */
	K_PATH,		/* a string; config_finish expands a leading "~/" */
	K_URL,		/* http:// or https:// */
	K_ENUM,		/* one of the '|'-separated choices */
	K_MODE,		/* octal permissions 000..0777, stored as "0NNN" */
	K_LISTEN,	/* unix:/PATH or HOST:PORT */
	K_INT,		/* int within min..max */
	K_LONG,		/* long within min..max */
	K_BOOL,		/* true | false, nothing else */
	K_DOUBLE,	/* finite number within min..max */
	K_SECRET_LIST,	/* auth.previous_jwt_secrets only */
	K_PROFILES,	/* llm.profiles only */
};

struct key {
	const char	*name;		/* dotted, relative to its table */
	enum ktype	 type;
	size_t		 off;		/* into struct config or llm_profile */
	long long	 min, max;	/* K_INT, K_LONG, K_DOUBLE */
	const char	*def;		/* default, parsed like a --set value */
	const char	*choices;	/* K_ENUM: "a|b|c" */
};

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

struct table {
	const struct key	*keys;
	size_t			 n;
};

static const struct table top_table = { keys, sizeof(keys) / sizeof(keys[0]) };
static const struct table profile_table = {
	profile_keys, sizeof(profile_keys) / sizeof(profile_keys[0])
};

/* One scalar value, from the file or from the command line. */
struct scalar {
	const char	*text;
	size_t		 len;
	bool		 null;		/* YAML null: empty, ~, null */
	bool		 quoted;	/* a quoted YAML scalar is never a number */
};

/* State of one config_load_file() walk. */
struct loader {
	const char	*path;
	yaml_document_t	*doc;
	char		*err;
	size_t		 errlen;
};

static void
profile_free(struct llm_profile *p)
{
	free(p->name);
	free(p->base_url);
	free(p->model);
	free(p->api_key_env);
	memset(p, 0, sizeof(*p));
}

static void
profiles_free(struct llm_profile *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		profile_free(&v[i]);
	free(v);
}

static void
list_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static bool
type_is_string(enum ktype t)
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

static const struct key *
table_find(const struct table *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (strcmp(t->keys[i].name, name) == 0)
			return &t->keys[i];
	return NULL;
}

/* A section ("server") is a prefix of at least one key ("server.workers"). */
static bool
table_has_section(const struct table *t, const char *name)
{
	size_t i, len = strlen(name);

	for (i = 0; i < t->n; i++)
		if (strncmp(t->keys[i].name, name, len) == 0 &&
		    t->keys[i].name[len] == '.')
			return true;
	return false;
}

/* The sentence after "key 'x': " when a value does not fit its key. */
static void
key_expected(const struct key *k, char *buf, size_t len)
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
static void
text_show(char *dst, size_t dstlen, const char *s, size_t len)
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
static bool
name_join(char *dst, size_t len, const char *prefix, const char *key)
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
static bool
string_valid(const struct key *k, const char *s)
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

static char *
dup_len(const char *s, size_t len)
{
	char *p = xmalloc(len + 1);

	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

/*
 * Store one scalar into the field of k in base (a struct config or a struct
 * llm_profile). On -1 nothing changed; the caller words the error with
 * key_expected().
 */
static int
scalar_store(void *base, const struct key *k, const struct scalar *v)
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
	s = v->null ? xstrdup("") : dup_len(v->text, v->len);
	if (!string_valid(k, s)) {
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
static void
list_replace(struct config *cfg, char **v, size_t n)
{
	list_free(cfg->auth.previous_jwt_secrets,
	    cfg->auth.n_previous_jwt_secrets);
	cfg->auth.previous_jwt_secrets = v;
	cfg->auth.n_previous_jwt_secrets = n;
}

static bool
list_item_valid(const char *s, size_t len)
{
	return len > 0 && len <= CONFIG_STR_MAX && memchr(s, '\0', len) == NULL;
}

/* --set form of a list: "a,b,c", or "" for none. Items are taken verbatim. */
static int
list_store_csv(struct config *cfg, const char *text)
{
	char		**v;
	const char	 *p, *comma;
	size_t		  n = 0, len;

	if (*text == '\0') {
		list_replace(cfg, NULL, 0);
		return 0;
	}
	v = xcalloc(CONFIG_LIST_MAX, sizeof(*v));
	for (p = text;; p = comma + 1) {
		comma = strchr(p, ',');
		len = comma ? (size_t)(comma - p) : strlen(p);
		if (n == CONFIG_LIST_MAX || !list_item_valid(p, len)) {
			list_free(v, n);
			return -1;
		}
		v[n++] = dup_len(p, len);
		if (comma == NULL)
			break;
	}
	list_replace(cfg, v, n);
	return 0;
}

static bool
profile_name_valid(const char *s, size_t len)
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

static void	profile_init(struct llm_profile *, const char *, size_t);

/*
 * Defaults of every key of t into base (a zeroed struct). The built-in text
 * goes through the same parsers as the user's, so it must parse. The default
 * of llm.profiles is one profile of that name, its fields at their defaults.
 */
static void
table_defaults(const struct table *t, void *base)
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
			rc = list_store_csv(base, k->def);
			break;
		case K_PROFILES:
			cfg = base;
			cfg->llm.profiles = xcalloc(1, sizeof(*cfg->llm.profiles));
			cfg->llm.n_profiles = 1;
			profile_init(&cfg->llm.profiles[0], k->def,
			    strlen(k->def));
			rc = 0;
			break;
		default:
			v.text = k->def;
			v.len = strlen(k->def);
			v.null = false;
			v.quoted = false;
			rc = scalar_store(base, k, &v);
			break;
		}
		if (rc == -1)
			abort();	/* a typo in the table, not a user error */
	}
}

static void
profile_init(struct llm_profile *p, const char *name, size_t namelen)
{
	memset(p, 0, sizeof(*p));
	p->name = dup_len(name, namelen);
	table_defaults(&profile_table, p);
}

void
config_defaults(struct config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	table_defaults(&top_table, cfg);
}

void
config_free(struct config *cfg)
{
	size_t i;

	if (cfg == NULL)
		return;
	for (i = 0; i < top_table.n; i++)
		if (type_is_string(keys[i].type))
			free(*(char **)((char *)cfg + keys[i].off));
	list_free(cfg->auth.previous_jwt_secrets,
	    cfg->auth.n_previous_jwt_secrets);
	profiles_free(cfg->llm.profiles, cfg->llm.n_profiles);
	free(cfg->path);
	memset(cfg, 0, sizeof(*cfg));
}

const struct llm_profile *
config_profile(const struct config *cfg, const char *name)
{
	size_t i;

	/* NULL or "" asks for the default, e.g. a conversation without model. */
	if (name == NULL || *name == '\0')
		name = cfg->llm.default_profile;
	if (name == NULL)
		return NULL;
	for (i = 0; i < cfg->llm.n_profiles; i++)
		if (strcmp(cfg->llm.profiles[i].name, name) == 0)
			return &cfg->llm.profiles[i];
	return NULL;
}

/* ------------------------------------------------------------ the file */

static int
load_error(struct loader *ld, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
load_error(struct loader *ld, const yaml_node_t *n, const char *fmt, ...)
{
	va_list	ap;
	int	len;

	len = snprintf(ld->err, ld->errlen, "%s:%zu: ", ld->path,
	    n->start_mark.line + 1);
	if (len < 0 || (size_t)len >= ld->errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(ld->err + len, ld->errlen - (size_t)len, fmt, ap);
	va_end(ap);
	return -1;
}

static int
load_type_error(struct loader *ld, const yaml_node_t *n, const struct key *k,
    const char *name)
{
	char why[160];

	key_expected(k, why, sizeof(why));
	return load_error(ld, n, "key '%s': %s", name, why);
}

static bool
node_is_null(const yaml_node_t *n)
{
	const char	*s;
	size_t		 len;

	if (n->type != YAML_SCALAR_NODE ||
	    n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	s = (const char *)n->data.scalar.value;
	len = n->data.scalar.length;
	return len == 0 || (len == 1 && s[0] == '~') ||
	    (len == 4 && (memcmp(s, "null", 4) == 0 ||
	    memcmp(s, "Null", 4) == 0 || memcmp(s, "NULL", 4) == 0));
}

static void
node_scalar(const yaml_node_t *n, struct scalar *v)
{
	v->text = (const char *)n->data.scalar.value;
	v->len = n->data.scalar.length;
	v->null = node_is_null(n);
	v->quoted = n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
}

static bool
node_same_key(const yaml_node_t *a, const yaml_node_t *b)
{
	return a->type == YAML_SCALAR_NODE && b->type == YAML_SCALAR_NODE &&
	    a->data.scalar.length == b->data.scalar.length &&
	    memcmp(a->data.scalar.value, b->data.scalar.value,
	    a->data.scalar.length) == 0;
}

/*
 * The key node of one mapping pair as a printable dotted name below prefix.
 * -1 (with the error written) when it is not a plain key name; a name with
 * a dot, or one too long to be ours, comes back with *known = false.
 */
static int
load_key_name(struct loader *ld, const yaml_node_t *kn, const char *prefix,
    char *name, size_t namelen, bool *known)
{
	char	shown[KEY_NAME_MAX];
	size_t	len;

	if (kn->type != YAML_SCALAR_NODE)
		return load_error(ld, kn, "expected a key name%s%s%s",
		    *prefix ? " under '" : "", prefix, *prefix ? "'" : "");
	len = kn->data.scalar.length;
	text_show(shown, sizeof(shown), (const char *)kn->data.scalar.value, len);
	*known = len < sizeof(shown) && strlen(shown) == len &&
	    memchr(shown, '.', len) == NULL;
	if (!name_join(name, namelen, prefix, shown))
		*known = false;		/* cut short, only good for a message */
	return 0;
}

/* A block of keys where a mapping or a null ("server:") may stand. */
static int
load_section_check(struct loader *ld, const yaml_node_t *vn, const char *name)
{
	if (vn->type == YAML_MAPPING_NODE || node_is_null(vn))
		return 0;
	return load_error(ld, vn, "key '%s': expected a mapping", name);
}

static int
load_list(struct loader *ld, struct config *cfg, const struct key *k,
    const yaml_node_t *vn, const char *name)
{
	char		**v;
	yaml_node_item_t *it;
	yaml_node_t	 *in;
	size_t		  n = 0;

	if (node_is_null(vn)) {
		list_replace(cfg, NULL, 0);
		return 0;
	}
	if (vn->type != YAML_SEQUENCE_NODE)
		return load_type_error(ld, vn, k, name);
	v = xcalloc(CONFIG_LIST_MAX, sizeof(*v));
	for (it = vn->data.sequence.items.start;
	    it < vn->data.sequence.items.top; it++) {
		in = yaml_document_get_node(ld->doc, *it);
		if (n == CONFIG_LIST_MAX || in == NULL ||
		    in->type != YAML_SCALAR_NODE ||
		    !list_item_valid((const char *)in->data.scalar.value,
		    in->data.scalar.length)) {
			list_free(v, n);
			return load_type_error(ld, in ? in : vn, k, name);
		}
		v[n++] = dup_len((const char *)in->data.scalar.value,
		    in->data.scalar.length);
	}
	list_replace(cfg, v, n);
	return 0;
}

static int load_map(struct loader *, const struct table *, void *,
    const yaml_node_t *, const char *);

/*
 * llm.profiles: NAME -> {field: value}. The file's set replaces the current
 * one as a whole, so a file naming only "fast" does not keep "default"; it is
 * built aside and swapped in so a failure leaves cfg as it was.
 */
static int
load_profiles(struct loader *ld, struct config *cfg, const struct key *k,
    const yaml_node_t *vn, const char *name)
{
	struct llm_profile	*v;
	yaml_node_pair_t	*pair, *prev;
	yaml_node_t		*kn, *pn;
	char			 pname[KEY_NAME_MAX];
	size_t			 n = 0, npairs;
	bool			 known;

	if (node_is_null(vn)) {
		profiles_free(cfg->llm.profiles, cfg->llm.n_profiles);
		cfg->llm.profiles = NULL;
		cfg->llm.n_profiles = 0;
		return 0;
	}
	if (vn->type != YAML_MAPPING_NODE)
		return load_type_error(ld, vn, k, name);
	npairs = (size_t)(vn->data.mapping.pairs.top -
	    vn->data.mapping.pairs.start);
	if (npairs > CONFIG_PROFILES_MAX)
		return load_error(ld, vn, "key '%s': at most %d profiles",
		    name, CONFIG_PROFILES_MAX);
	v = xcalloc(npairs ? npairs : 1, sizeof(*v));
	for (pair = vn->data.mapping.pairs.start;
	    pair < vn->data.mapping.pairs.top; pair++) {
		kn = yaml_document_get_node(ld->doc, pair->key);
		pn = yaml_document_get_node(ld->doc, pair->value);
		if (kn == NULL || pn == NULL)
			goto bad;	/* libyaml never does this */
		if (load_key_name(ld, kn, name, pname, sizeof(pname),
		    &known) == -1)
			goto err;
		if (!profile_name_valid((const char *)kn->data.scalar.value,
		    kn->data.scalar.length)) {
			load_error(ld, kn, "key '%s': a profile name is 1 to %d "
			    "of A-Z a-z 0-9 . _ -", pname, PROFILE_NAME_MAX);
			goto err;
		}
		for (prev = vn->data.mapping.pairs.start; prev < pair; prev++)
			if (node_same_key(yaml_document_get_node(ld->doc,
			    prev->key), kn)) {
				load_error(ld, kn, "duplicate key '%s'", pname);
				goto err;
			}
		profile_init(&v[n++], (const char *)kn->data.scalar.value,
		    kn->data.scalar.length);
		if (load_section_check(ld, pn, pname) == -1)
			goto err;
		if (pn->type == YAML_MAPPING_NODE &&
		    load_map(ld, &profile_table, &v[n - 1], pn, pname) == -1)
			goto err;
	}
	profiles_free(cfg->llm.profiles, cfg->llm.n_profiles);
	cfg->llm.profiles = v;
	cfg->llm.n_profiles = n;
	return 0;
bad:
	load_type_error(ld, vn, k, name);
err:
	profiles_free(v, n);
	return -1;
}

static int
load_value(struct loader *ld, void *base, const struct key *k,
    const yaml_node_t *vn, const char *name)
{
	struct scalar v;

	switch (k->type) {
	case K_SECRET_LIST:
		return load_list(ld, base, k, vn, name);
	case K_PROFILES:
		return load_profiles(ld, base, k, vn, name);
	default:
		break;
	}
	if (vn->type != YAML_SCALAR_NODE)
		return load_type_error(ld, vn, k, name);
	node_scalar(vn, &v);
	if (scalar_store(base, k, &v) == -1)
		return load_type_error(ld, vn, k, name);
	return 0;
}

/*
 * One mapping of keys of table t, below the dotted prefix (relative to t).
 * display is what error messages put before the prefix ("llm.profiles.x"
 * for a profile's fields). Unknown and duplicate keys are errors; recursion
 * only follows sections of t, so its depth is bounded by the table.
 */
static int
load_map_at(struct loader *ld, const struct table *t, void *base,
    const yaml_node_t *map, const char *prefix, const char *display)
{
	const struct key	*k;
	yaml_node_pair_t	*pair, *prev;
	yaml_node_t		*kn, *vn, *pk;
	char			 rel[KEY_NAME_MAX], name[KEY_NAME_MAX * 2];
	bool			 known;

	for (pair = map->data.mapping.pairs.start;
	    pair < map->data.mapping.pairs.top; pair++) {
		kn = yaml_document_get_node(ld->doc, pair->key);
		vn = yaml_document_get_node(ld->doc, pair->value);
		if (kn == NULL || vn == NULL)
			return load_error(ld, map, "malformed mapping");
		if (load_key_name(ld, kn, prefix, rel, sizeof(rel),
		    &known) == -1)
			return -1;
		name_join(name, sizeof(name), display, rel);
		k = known ? table_find(t, rel) : NULL;
		if (k == NULL && !(known && table_has_section(t, rel)))
			return load_error(ld, kn, "unknown key '%s'", name);
		for (prev = map->data.mapping.pairs.start; prev < pair; prev++) {
			pk = yaml_document_get_node(ld->doc, prev->key);
			if (pk != NULL && node_same_key(pk, kn))
				return load_error(ld, kn, "duplicate key '%s'",
				    name);
		}
		if (k != NULL) {
			if (load_value(ld, base, k, vn, name) == -1)
				return -1;
			continue;
		}
		if (load_section_check(ld, vn, name) == -1)
			return -1;
		if (vn->type == YAML_MAPPING_NODE &&
		    load_map_at(ld, t, base, vn, rel, display) == -1)
			return -1;
	}
	return 0;
}

static int
load_map(struct loader *ld, const struct table *t, void *base,
    const yaml_node_t *map, const char *display)
{
	return load_map_at(ld, t, base, map, "", display);
}

/* The whole file into memory, at most CONFIG_FILE_MAX bytes. */
static int
file_read(const char *path, char **bufp, size_t *lenp, char *err,
    size_t errlen)
{
	struct stat	 st;
	char		*buf = NULL;
	size_t		 len = 0;
	ssize_t		 r;
	int		 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		goto fail;
	}
	/* One byte more than allowed, to tell "exactly max" from "more". */
	buf = xmalloc(CONFIG_FILE_MAX + 1);
	while (len <= CONFIG_FILE_MAX) {
		r = read(fd, buf + len, CONFIG_FILE_MAX + 1 - len);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			goto fail;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	if (len > CONFIG_FILE_MAX) {
		snprintf(err, errlen, "%s: larger than %d bytes", path,
		    CONFIG_FILE_MAX);
		goto fail;
	}
	close(fd);
	*bufp = buf;
	*lenp = len;
	return 0;
fail:
	free(buf);
	close(fd);
	return -1;
}

static void
yaml_syntax_error(const yaml_parser_t *p, const char *path, const char *buf,
    size_t len, char *err, size_t errlen)
{
	size_t i, line;

	if (p->error == YAML_MEMORY_ERROR) {
		snprintf(err, errlen, "%s: out of memory while parsing", path);
		return;
	}
	if (p->error == YAML_READER_ERROR) {
		/* Encoding errors carry a byte offset, not a mark. */
		for (i = 0, line = 1; i < p->problem_offset && i < len; i++)
			if (buf[i] == '\n')
				line++;
	} else
		line = p->problem_mark.line + 1;
	if (p->context != NULL)
		snprintf(err, errlen, "%s:%zu: YAML syntax error: %s "
		    "(%s on line %zu)", path, line,
		    p->problem ? p->problem : "unknown problem", p->context,
		    p->context_mark.line + 1);
	else
		snprintf(err, errlen, "%s:%zu: YAML syntax error: %s", path,
		    line, p->problem ? p->problem : "unknown problem");
}

int
config_load_file(struct config *cfg, const char *path, char *err,
    size_t errlen)
{
	yaml_parser_t	 parser;
	yaml_document_t	 doc, extra;
	yaml_node_t	*root, *next;
	struct loader	 ld;
	char		*buf = NULL;
	size_t		 len;
	size_t		 line;
	int		 rc = -1, have_doc = 0;

	if (file_read(path, &buf, &len, err, errlen) == -1)
		return -1;
	if (!yaml_parser_initialize(&parser)) {
		snprintf(err, errlen, "%s: out of memory", path);
		free(buf);
		return -1;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&parser, &doc)) {
		yaml_syntax_error(&parser, path, buf, len, err, errlen);
		goto out;
	}
	have_doc = 1;
	root = yaml_document_get_root_node(&doc);

	/* A second document would be ignored silently; refuse it instead. */
	if (root != NULL) {
		if (!yaml_parser_load(&parser, &extra)) {
			yaml_syntax_error(&parser, path, buf, len, err, errlen);
			goto out;
		}
		next = yaml_document_get_root_node(&extra);
		line = next ? next->start_mark.line + 1 : 0;
		yaml_document_delete(&extra);
		if (next != NULL) {
			snprintf(err, errlen, "%s:%zu: a second YAML document; "
			    "the configuration is one document", path, line);
			goto out;
		}
	}

	free(cfg->path);
	cfg->path = xstrdup(path);
	if (root == NULL || node_is_null(root)) {
		rc = 0;		/* empty file: the defaults stand */
		goto out;
	}
	ld.path = path;
	ld.doc = &doc;
	ld.err = err;
	ld.errlen = errlen;
	if (root->type != YAML_MAPPING_NODE) {
		load_error(&ld, root, "expected a mapping of keys at the top");
		goto out;
	}
	rc = load_map(&ld, &top_table, cfg, root, "");
out:
	if (have_doc)
		yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	free(buf);
	return rc;
}

/* ------------------------------------------------------ the command line */

/*
 * "--set KEY=VALUE: " with the value shortened, or hidden for secrets and
 * for unknown keys (a typo in "auth.jwt_secret" must not print the secret).
 */
static int
set_error(char *err, size_t errlen, const char *key, const char *value,
    bool secret, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static int
set_error(char *err, size_t errlen, const char *key, const char *value,
    bool secret, const char *fmt, ...)
{
	char	shown[SHOWN_VALUE_MAX + 4];
	size_t	vlen = strlen(value);
	va_list	ap;
	int	len;

	if (secret && vlen > 0)
		snprintf(shown, sizeof(shown), "(hidden)");
	else {
		text_show(shown, SHOWN_VALUE_MAX + 1, value,
		    vlen > SHOWN_VALUE_MAX ? SHOWN_VALUE_MAX : vlen);
		if (vlen > SHOWN_VALUE_MAX)
			strcat(shown, "...");
	}
	len = snprintf(err, errlen, "--set %s=%s: ", key, shown);
	if (len < 0 || (size_t)len >= errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err + len, errlen - (size_t)len, fmt, ap);
	va_end(ap);
	return -1;
}

static struct llm_profile *
profile_find_or_add(struct config *cfg, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < cfg->llm.n_profiles; i++)
		if (strlen(cfg->llm.profiles[i].name) == len &&
		    memcmp(cfg->llm.profiles[i].name, name, len) == 0)
			return &cfg->llm.profiles[i];
	if (cfg->llm.n_profiles >= CONFIG_PROFILES_MAX)
		return NULL;
	cfg->llm.profiles = xrealloc(cfg->llm.profiles,
	    (cfg->llm.n_profiles + 1) * sizeof(*cfg->llm.profiles));
	profile_init(&cfg->llm.profiles[cfg->llm.n_profiles], name, len);
	return &cfg->llm.profiles[cfg->llm.n_profiles++];
}

/* llm.profiles.NAME.FIELD=VALUE; NAME may contain dots, FIELD may not. */
static int
set_profile_field(struct config *cfg, const char *key, const char *value,
    char *err, size_t errlen)
{
	const struct key	*k;
	struct llm_profile	*p, scratch;
	struct scalar		 v;
	const char		*name = key + strlen(PROFILES_PREFIX), *dot;
	char			 why[160], shown[KEY_NAME_MAX];
	int			 rc;

	text_show(shown, sizeof(shown), key, strlen(key));
	if ((dot = strrchr(name, '.')) == NULL ||
	    (k = table_find(&profile_table, dot + 1)) == NULL)
		return set_error(err, errlen, shown, value, true,
		    "unknown key '%s'", shown);
	if (!profile_name_valid(name, (size_t)(dot - name)))
		return set_error(err, errlen, shown, value, false,
		    "a profile name is 1 to %d of A-Z a-z 0-9 . _ -",
		    PROFILE_NAME_MAX);
	v.text = value;
	v.len = strlen(value);
	v.null = v.len == 0;
	v.quoted = false;
	/* Check the value before a profile is created for it. */
	memset(&scratch, 0, sizeof(scratch));
	rc = scalar_store(&scratch, k, &v);
	profile_free(&scratch);
	if (rc == -1)
		goto bad;
	if ((p = profile_find_or_add(cfg, name, (size_t)(dot - name))) == NULL)
		return set_error(err, errlen, shown, value, false,
		    "at most %d profiles", CONFIG_PROFILES_MAX);
	if (scalar_store(p, k, &v) == -1)
		goto bad;
	return 0;
bad:
	key_expected(k, why, sizeof(why));
	return set_error(err, errlen, shown, value, false, "%s", why);
}

/*
 * The value after '=' is the scalar itself, taken verbatim (no YAML quoting
 * or comments: a secret starting with '#' or '"' must stay what it is). An
 * empty value is the empty string, the empty list or, for numbers, an error.
 */
int
config_set(struct config *cfg, const char *assignment, char *err,
    size_t errlen)
{
	const struct key	*k;
	const char		*eq, *value;
	char			 key[KEY_NAME_MAX], why[160];
	struct scalar		 v;
	size_t			 keylen;
	bool			 secret;
	int			 rc;

	if ((eq = strchr(assignment, '=')) == NULL || eq == assignment) {
		text_show(key, sizeof(key), assignment, strlen(assignment));
		snprintf(err, errlen, "--set %s: expected KEY=VALUE", key);
		return -1;
	}
	value = eq + 1;
	keylen = (size_t)(eq - assignment);
	text_show(key, sizeof(key), assignment, keylen);
	if (keylen >= sizeof(key) || strlen(key) != keylen)
		return set_error(err, errlen, key, value, true,
		    "unknown key '%s'", key);
	if (strncmp(key, PROFILES_PREFIX, strlen(PROFILES_PREFIX)) == 0)
		return set_profile_field(cfg, key, value, err, errlen);
	if ((k = table_find(&top_table, key)) == NULL)
		return set_error(err, errlen, key, value, true,
		    "unknown key '%s'", key);
	if (k->type == K_PROFILES)
		return set_error(err, errlen, key, value, false,
		    "set one field at a time: %sNAME.FIELD=VALUE",
		    PROFILES_PREFIX);

	secret = k->type == K_SECRET || k->type == K_SECRET_LIST;
	if (k->type == K_SECRET_LIST)
		rc = list_store_csv(cfg, value);
	else {
		v.text = value;
		v.len = strlen(value);
		v.null = v.len == 0;
		v.quoted = false;
		rc = scalar_store(cfg, k, &v);
	}
	if (rc == -1) {
		key_expected(k, why, sizeof(why));
		return set_error(err, errlen, key, value, secret, "%s", why);
	}
	return 0;
}

/* ------------------------------------------------------------ finishing */

static int
home_dir(char *buf, size_t len)
{
	struct passwd	 pw, *res = NULL;
	char		 pwbuf[16384];
	const char	*home = getenv("HOME");

	if (home == NULL || home[0] != '/') {
		if (getpwuid_r(getuid(), &pw, pwbuf, sizeof(pwbuf), &res) != 0 ||
		    res == NULL || pw.pw_dir == NULL || pw.pw_dir[0] != '/')
			return -1;
		home = pw.pw_dir;
	}
	if (strlen(home) >= len)
		return -1;
	snprintf(buf, len, "%s", home);
	return 0;
}

/* "~" and "~/x" become $HOME and $HOME/x; "~user" is refused, not guessed. */
static int
path_expand(char **pathp, const char *name, char *err, size_t errlen,
    const char *where)
{
	char	 home[CONFIG_STR_MAX], *out;
	char	*path = *pathp;
	size_t	 len;

	if (path[0] != '~')
		return 0;
	if (path[1] != '\0' && path[1] != '/') {
		snprintf(err, errlen, "%skey '%s': only \"~/\" is expanded, "
		    "not \"~user\"", where, name);
		return -1;
	}
	if (home_dir(home, sizeof(home)) == -1) {
		snprintf(err, errlen, "%skey '%s': no home directory to "
		    "expand \"~\" (set HOME)", where, name);
		return -1;
	}
	len = strlen(home) + strlen(path + 1);
	if (len > CONFIG_STR_MAX) {
		snprintf(err, errlen, "%skey '%s': longer than %d bytes once "
		    "\"~\" is expanded", where, name, CONFIG_STR_MAX);
		return -1;
	}
	out = xmalloc(len + 1);
	snprintf(out, len + 1, "%s%s", home, path + 1);
	free(path);
	*pathp = out;
	return 0;
}

/* Values set behind our back (tests, the CLI) get the checks too. */
static int
table_check(const struct table *t, const void *base, const char *display,
    char *err, size_t errlen, const char *where)
{
	const struct key	*k;
	const char		*s;
	char			 why[160];
	size_t			 i;

	for (i = 0; i < t->n; i++) {
		k = &t->keys[i];
		if (!type_is_string(k->type))
			continue;
		s = *(char *const *)((const char *)base + k->off);
		if (s != NULL && strlen(s) <= CONFIG_STR_MAX &&
		    string_valid(k, s))
			continue;
		key_expected(k, why, sizeof(why));
		snprintf(err, errlen, "%skey '%s%s%s': %s", where, display,
		    *display ? "." : "", k->name, why);
		return -1;
	}
	return 0;
}

int
config_finish(struct config *cfg, char *err, size_t errlen)
{
	const char	*secret = getenv(JWT_SECRET_ENV);
	char		 where[CONFIG_STR_MAX + 3] = "", display[KEY_NAME_MAX];
	size_t		 i;

	if (cfg->path != NULL)
		snprintf(where, sizeof(where), "%s: ", cfg->path);

	/* The environment beats the file: secrets stay out of /etc. */
	if (secret != NULL && *secret != '\0') {
		if (strlen(secret) > CONFIG_STR_MAX) {
			snprintf(err, errlen, "%s: longer than %d bytes",
			    JWT_SECRET_ENV, CONFIG_STR_MAX);
			return -1;
		}
		free(cfg->auth.jwt_secret);
		cfg->auth.jwt_secret = xstrdup(secret);
	}

	if (table_check(&top_table, cfg, "", err, errlen, where) == -1)
		return -1;
	for (i = 0; i < cfg->llm.n_profiles; i++) {
		name_join(display, sizeof(display), "llm.profiles",
		    cfg->llm.profiles[i].name);
		if (table_check(&profile_table, &cfg->llm.profiles[i], display,
		    err, errlen, where) == -1)
			return -1;
	}

	/* Before "~" expansion, so "~/x" as instance_dir works for both. */
	if (cfg->log.file[0] == '\0') {
		free(cfg->log.file);
		cfg->log.file = xasprintf("%s/logs/codumentor.log",
		    cfg->instance_dir);
	}
	for (i = 0; i < top_table.n; i++) {
		char **p = (char **)((char *)cfg + keys[i].off);

		if (keys[i].type != K_PATH)
			continue;
		if (path_expand(p, keys[i].name, err, errlen, where) == -1)
			return -1;
		if (**p == '\0' || strlen(*p) > CONFIG_STR_MAX) {
			snprintf(err, errlen, "%skey '%s': expected a path of "
			    "1 to %d bytes", where, keys[i].name,
			    CONFIG_STR_MAX);
			return -1;
		}
	}

	if (config_profile(cfg, cfg->llm.default_profile) == NULL ||
	    cfg->llm.default_profile[0] == '\0') {
		snprintf(display, sizeof(display), "%s",
		    cfg->llm.default_profile);
		snprintf(err, errlen, "%skey 'llm.default_profile': no profile "
		    "'%s' in llm.profiles", where, display);
		return -1;
	}
	return 0;
}
