/*
 * config.c — the configuration's API: built-in defaults, `--set KEY=VALUE`
 * overrides, config_finish (the environment, "~/" expansion, final checks)
 * and config_free. One table of keys (config_keys.c) drives it and the file
 * reader (config_yaml.c), so the file, the command line and
 * doc/configuration.md describe the same thing.
 *
 * It only parses, checks and stores values. It does not open sockets, create
 * directories, resolve groups or look up API keys; the only thing it reads
 * from the environment is CODUMENTOR_JWT_SECRET and $HOME (for "~/").
 */
#include <pwd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "config_keys.h"
#include "util.h"

#define SHOWN_VALUE_MAX		64		/* of a --set value, in errors */
#define JWT_SECRET_ENV		"CODUMENTOR_JWT_SECRET"

void
config_defaults(struct config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg_table_defaults(&cfg_top_table, cfg);
}

void
config_free(struct config *cfg)
{
	const struct key	*keys = cfg_top_table.keys;
	size_t			 i;

	if (cfg == NULL)
		return;
	for (i = 0; i < cfg_top_table.n; i++)
		if (cfg_type_is_string(keys[i].type))
			free(*(char **)((char *)cfg + keys[i].off));
	cfg_list_free(cfg->auth.previous_jwt_secrets,
	    cfg->auth.n_previous_jwt_secrets);
	cfg_profiles_free(cfg->llm.profiles, cfg->llm.n_profiles);
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
		cfg_text_show(shown, SHOWN_VALUE_MAX + 1, value,
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
	cfg_profile_init(&cfg->llm.profiles[cfg->llm.n_profiles], name, len);
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

	cfg_text_show(shown, sizeof(shown), key, strlen(key));
	if ((dot = strrchr(name, '.')) == NULL ||
	    (k = cfg_table_find(&cfg_profile_table, dot + 1)) == NULL)
		return set_error(err, errlen, shown, value, true,
		    "unknown key '%s'", shown);
	if (!cfg_profile_name_valid(name, (size_t)(dot - name)))
		return set_error(err, errlen, shown, value, false,
		    "a profile name is 1 to %d of A-Z a-z 0-9 . _ -",
		    PROFILE_NAME_MAX);
	v.text = value;
	v.len = strlen(value);
	v.null = v.len == 0;
	v.quoted = false;
	/* Check the value before a profile is created for it. */
	memset(&scratch, 0, sizeof(scratch));
	rc = cfg_scalar_store(&scratch, k, &v);
	cfg_profile_free(&scratch);
	if (rc == -1)
		goto bad;
	if ((p = profile_find_or_add(cfg, name, (size_t)(dot - name))) == NULL)
		return set_error(err, errlen, shown, value, false,
		    "at most %d profiles", CONFIG_PROFILES_MAX);
	if (cfg_scalar_store(p, k, &v) == -1)
		goto bad;
	return 0;
bad:
	cfg_key_expected(k, why, sizeof(why));
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
		cfg_text_show(key, sizeof(key), assignment, strlen(assignment));
		snprintf(err, errlen, "--set %s: expected KEY=VALUE", key);
		return -1;
	}
	value = eq + 1;
	keylen = (size_t)(eq - assignment);
	cfg_text_show(key, sizeof(key), assignment, keylen);
	if (keylen >= sizeof(key) || strlen(key) != keylen)
		return set_error(err, errlen, key, value, true,
		    "unknown key '%s'", key);
	if (strncmp(key, PROFILES_PREFIX, strlen(PROFILES_PREFIX)) == 0)
		return set_profile_field(cfg, key, value, err, errlen);
	if ((k = cfg_table_find(&cfg_top_table, key)) == NULL)
		return set_error(err, errlen, key, value, true,
		    "unknown key '%s'", key);
	if (k->type == K_PROFILES)
		return set_error(err, errlen, key, value, false,
		    "set one field at a time: %sNAME.FIELD=VALUE",
		    PROFILES_PREFIX);

	secret = k->type == K_SECRET || k->type == K_SECRET_LIST;
	if (k->type == K_SECRET_LIST)
		rc = cfg_list_store_csv(cfg, value);
	else {
		v.text = value;
		v.len = strlen(value);
		v.null = v.len == 0;
		v.quoted = false;
		rc = cfg_scalar_store(cfg, k, &v);
	}
	if (rc == -1) {
		cfg_key_expected(k, why, sizeof(why));
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
		if (!cfg_type_is_string(k->type))
			continue;
		s = *(char *const *)((const char *)base + k->off);
		if (s != NULL && strlen(s) <= CONFIG_STR_MAX &&
		    cfg_string_valid(k, s))
			continue;
		cfg_key_expected(k, why, sizeof(why));
		snprintf(err, errlen, "%skey '%s%s%s': %s", where, display,
		    *display ? "." : "", k->name, why);
		return -1;
	}
	return 0;
}

int
config_finish(struct config *cfg, char *err, size_t errlen)
{
	const struct key	*keys = cfg_top_table.keys;
	const char		*secret = getenv(JWT_SECRET_ENV);
	char			 where[CONFIG_STR_MAX + 3] = "";
	char			 display[KEY_NAME_MAX];
	size_t			 i;

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

	if (table_check(&cfg_top_table, cfg, "", err, errlen, where) == -1)
		return -1;
	for (i = 0; i < cfg->llm.n_profiles; i++) {
		cfg_name_join(display, sizeof(display), "llm.profiles",
		    cfg->llm.profiles[i].name);
		if (table_check(&cfg_profile_table, &cfg->llm.profiles[i],
		    display, err, errlen, where) == -1)
			return -1;
	}

	/* Before "~" expansion, so "~/x" as instance_dir works for both. */
	if (cfg->log.file[0] == '\0') {
		free(cfg->log.file);
		cfg->log.file = xasprintf("%s/logs/codumentor.log",
		    cfg->instance_dir);
	}
	for (i = 0; i < cfg_top_table.n; i++) {
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
