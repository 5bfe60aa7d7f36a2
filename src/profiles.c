/*
 * profiles.c — model profiles: a user's own (table user_profiles, their API
 * key sealed in the store) and the configuration's llm.profiles, resolved in
 * that order. The API key only leaves this file inside a resolved_profile
 * for the LLM client; errors name the profile, never the key.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sodium.h>

#include "app.h"
#include "crypto.h"
#include "db.h"
#include "profiles.h"
#include "secrets.h"
#include "util.h"

#define UP_COLUMNS	"p.name, p.base_url, p.model, p.context_window, " \
			"p.max_output_tokens, p.temperature, p.updated_at, " \
			"EXISTS (SELECT 1 FROM sealed_values v WHERE " \
			"v.user_id = p.user_id AND v.kind = 'profile' AND " \
			"v.name = p.name)"

bool
profile_api_key_valid(const char *key)
{
	size_t i;

	for (i = 0; key[i] != '\0'; i++)
		if (i >= PROFILE_KEY_MAX || key[i] <= ' ' || key[i] > '~')
			return false;
	return i > 0;
}

bool
profile_url_allowed(const char *url)
{
	const char	*list = app.cfg.llm.user_base_urls, *p;
	size_t		 i, len;

	for (i = 0; i < app.cfg.llm.n_profiles; i++)
		if (strcmp(url, app.cfg.llm.profiles[i].base_url) == 0)
			return true;
	for (p = list ? list : ""; *p != '\0'; p += len) {
		p += strspn(p, ", \t");
		len = strcspn(p, ", \t");
		if (len > 0 && strncmp(url, p, len) == 0)
			return true;
	}
	return false;
}

static void
row_to_profile(sqlite3_stmt *st, struct user_profile *p)
{
	const char *s;

	memset(p, 0, sizeof(*p));
	s = (const char *)sqlite3_column_text(st, 0);
	strlcpy_(p->name, s ? s : "", sizeof(p->name));
	s = (const char *)sqlite3_column_text(st, 1);
	strlcpy_(p->base_url, s ? s : "", sizeof(p->base_url));
	s = (const char *)sqlite3_column_text(st, 2);
	strlcpy_(p->model, s ? s : "", sizeof(p->model));
	p->context_window = sqlite3_column_int(st, 3);
	p->max_output_tokens = sqlite3_column_int(st, 4);
	p->temperature = sqlite3_column_double(st, 5);
	s = (const char *)sqlite3_column_text(st, 6);
	strlcpy_(p->updated_at, s ? s : "", sizeof(p->updated_at));
	p->has_api_key = sqlite3_column_int(st, 7) != 0;
}

/* 0 found, 1 absent, -1 error. */
static int
user_profile_get(const char *user_id, const char *name, struct user_profile *p)
{
	static const char *sql = "SELECT " UP_COLUMNS " FROM user_profiles p "
	    "WHERE p.user_id = ?1 AND p.name = ?2";
	sqlite3_stmt	*st;
	int		 rc;

	if ((st = db_stmt(sql)) == NULL)
		return -1;
	sqlite3_bind_text(st, 1, user_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		row_to_profile(st, p);
	sqlite3_reset(st);
	if (rc == SQLITE_ROW)
		return 0;
	if (rc == SQLITE_DONE)
		return 1;
	return db_fail("profile read");
}

int
user_profile_put(const char *user_id, const struct user_profile *p,
    const char *api_key)
{
	static const char *sql = "INSERT INTO user_profiles (user_id, name, "
	    "base_url, model, context_window, max_output_tokens, temperature, "
	    "created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8) "
	    "ON CONFLICT (user_id, name) DO UPDATE SET "
	    "base_url = excluded.base_url, model = excluded.model, "
	    "context_window = excluded.context_window, "
	    "max_output_tokens = excluded.max_output_tokens, "
	    "temperature = excluded.temperature, "
	    "updated_at = excluded.updated_at";
	sqlite3_stmt	*st;
	char		 ts[TIME_BUFSZ];
	int		 rc;

	time_rfc3339(ts, now_ms());
	if (db_begin() == -1)
		return -1;
	if ((st = db_stmt(sql)) == NULL)
		goto fail;
	sqlite3_bind_text(st, 1, user_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, p->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, p->base_url, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, p->model, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 5, p->context_window);
	sqlite3_bind_int(st, 6, p->max_output_tokens);
	sqlite3_bind_double(st, 7, p->temperature);
	sqlite3_bind_text(st, 8, ts, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		db_fail("profile write");
		goto fail;
	}
	if (api_key != NULL && *api_key != '\0') {
		if (vault_put(user_id, VAULT_PROFILE, p->name, api_key,
		    strlen(api_key), false) == -1)
			goto fail;
	} else if (api_key != NULL) {
		if (vault_delete(user_id, VAULT_PROFILE, p->name) == -1)
			goto fail;
	}
	return db_commit();
fail:
	db_rollback();
	return -1;
}

int
user_profile_list(const char *user_id, struct user_profile **out, size_t *n)
{
	static const char *sql = "SELECT " UP_COLUMNS " FROM user_profiles p "
	    "WHERE p.user_id = ?1 ORDER BY p.name";
	sqlite3_stmt	*st;
	size_t		 cap = 0;
	int		 rc;

	*out = NULL;
	*n = 0;
	if ((st = db_stmt(sql)) == NULL)
		return -1;
	sqlite3_bind_text(st, 1, user_id, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 4;
			*out = xrealloc(*out, cap * sizeof(**out));
		}
		row_to_profile(st, &(*out)[(*n)++]);
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		free(*out);
		*out = NULL;
		*n = 0;
		return db_fail("profile list");
	}
	return 0;
}

int
user_profile_delete(const char *user_id, const char *name)
{
	static const char *sql = "DELETE FROM user_profiles WHERE user_id = ?1 "
	    "AND name = ?2";
	sqlite3_stmt	*st;
	int		 rc, changed;

	if (db_begin() == -1)
		return -1;
	if ((st = db_stmt(sql)) == NULL)
		goto fail;
	sqlite3_bind_text(st, 1, user_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		db_fail("profile delete");
		goto fail;
	}
	changed = sqlite3_changes(db_conn()) > 0;
	if (vault_delete(user_id, VAULT_PROFILE, name) == -1)
		goto fail;
	if (db_commit() == -1)
		return -1;
	return changed ? 0 : 1;
fail:
	db_rollback();
	return -1;
}

/* The user's own profile NAME: 0 resolved, 1 none, -1 error (err says). */
static int
resolve_user(const char *user_id, const char *name,
    struct resolved_profile *out, char *err, size_t errlen)
{
	struct user_profile	 p;
	char			*key = NULL, why[256];
	size_t			 keylen;
	int			 rc;

	if ((rc = user_profile_get(user_id, name, &p)) != 0) {
		if (rc == -1)
			snprintf(err, errlen, "model profile '%s' could not be "
			    "read", name);
		return rc;
	}
	if (p.has_api_key && vault_get(user_id, VAULT_PROFILE, name, &key,
	    &keylen, why, sizeof(why)) == -1) {
		snprintf(err, errlen, "model profile '%s': its API key cannot "
		    "be opened: %s", name, why);
		return -1;
	}
	/* Checked again at use: the operator may have narrowed the list. */
	if (!profile_url_allowed(p.base_url)) {
		if (key != NULL) {
			sodium_memzero(key, keylen);
			free(key);
		}
		snprintf(err, errlen, "model profile '%s': its endpoint is not "
		    "among those this server may use (llm.user_base_urls)", name);
		return -1;
	}
	strlcpy_(out->name, p.name, sizeof(out->name));
	out->base_url = xstrdup(p.base_url);
	out->model = xstrdup(p.model);
	out->api_key = key;
	out->context_window = p.context_window;
	out->max_output_tokens = p.max_output_tokens;
	out->temperature = p.temperature;
	return 0;
}

int
profile_resolve(const char *user_id, const char *name,
    struct resolved_profile *out, char *err, size_t errlen)
{
	const struct llm_profile	*p;
	const char			*key = NULL;
	int				 rc;

	memset(out, 0, sizeof(*out));
	if (name == NULL || *name == '\0')
		name = app.cfg.llm.default_profile;
	if (user_id != NULL && *user_id != '\0' &&
	    (rc = resolve_user(user_id, name, out, err, errlen)) != 1)
		return rc;
	if ((p = config_profile(&app.cfg, name)) == NULL) {
		snprintf(err, errlen, "no model profile named '%s'", name);
		return 1;
	}
	if (p->api_key_env != NULL && *p->api_key_env != '\0') {
		if ((key = getenv(p->api_key_env)) == NULL || *key == '\0') {
			snprintf(err, errlen, "model profile '%s': the environment "
			    "variable %s holding its API key is not set", name,
			    p->api_key_env);
			return -1;
		}
	}
	strlcpy_(out->name, p->name, sizeof(out->name));
	out->base_url = xstrdup(p->base_url);
	out->model = xstrdup(p->model ? p->model : "");
	out->api_key = key ? xstrdup(key) : NULL;
	out->context_window = p->context_window;
	out->max_output_tokens = p->max_output_tokens;
	out->temperature = p->temperature;
	return 0;
}

void
profile_free(struct resolved_profile *p)
{
	free(p->base_url);
	free(p->model);
	if (p->api_key) {
		sodium_memzero(p->api_key, strlen(p->api_key));
		free(p->api_key);
	}
	memset(p, 0, sizeof(*p));
}
