/*
 * secrets.c — the sealed store (table sealed_values) and what the rest of
 * the server does with it: per-user secrets, the environment a user's
 * sandboxed commands get, and redaction of secret values from tool output.
 * Values are sealed and opened by crypto.c; a read that finds a value under
 * an old key or in plaintext seals it again. Nothing here logs or returns a
 * value to a client: the HTTP layer only ever sees names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sodium.h>

#include "crypto.h"
#include "db.h"
#include "log.h"
#include "secrets.h"

#define ROW_COLUMNS	"v.user_id, u.username, v.kind, v.name, v.scheme, " \
			"v.key_id, v.value, v.env, v.updated_at"
#define WITHHELD	"[output withheld: the user's secrets could not be " \
			"checked for redaction]"

/* One sealed_values row, copied out of SQLite. */
struct vrow {
	char		 user_id[ID_BUFSZ + 8];
	char		 username[80];
	char		 kind[16];
	char		 name[SECRET_NAME_MAX + 1];
	char		 scheme[24];
	char		 key_id[CRYPTO_KEY_ID_LEN + 1];
	bool		 has_key_id;
	unsigned char	*value;
	size_t		 len;
	bool		 env;
	char		 updated_at[TIME_BUFSZ];
};

bool
secret_name_valid(const char *name)
{
	size_t i;

	for (i = 0; name[i] != '\0'; i++) {
		char c = name[i];

		if (i >= SECRET_NAME_MAX || !((c >= 'a' && c <= 'z') ||
		    (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '_' || c == '.' || c == '-'))
			return false;
	}
	/* "." and ".." would be normalised away in a URL: unreachable names. */
	return i > 0 && strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

bool
env_name_valid(const char *name)
{
	size_t i;

	/* The loader's variables would reach every program in the sandbox. */
	if (strncmp(name, "LD_", 3) == 0)
		return false;
	for (i = 0; name[i] != '\0'; i++) {
		char c = name[i];

		if (i >= SECRET_NAME_MAX || !((c >= 'a' && c <= 'z') ||
		    (c >= 'A' && c <= 'Z') || c == '_' ||
		    (i > 0 && c >= '0' && c <= '9')))
			return false;
	}
	return i > 0;
}

static void
rows_free(struct vrow *r, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (r[i].value != NULL) {
			sodium_memzero(r[i].value, r[i].len);
			free(r[i].value);
		}
	free(r);
}

static void
copy_text(char *dst, size_t len, sqlite3_stmt *st, int col)
{
	const char *s = (const char *)sqlite3_column_text(st, col);

	strlcpy_(dst, s ? s : "", len);
}

/*
 * Run a prepared SELECT of ROW_COLUMNS to the end and copy its rows, so no
 * statement stays open while the caller opens values and writes back.
 */
static int
rows_collect(sqlite3_stmt *st, struct vrow **out, size_t *n)
{
	struct vrow	*r = NULL, *row;
	size_t		 cap = 0;
	int		 rc;
	const void	*blob;

	*out = NULL;
	*n = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 8;
			r = xrealloc(r, cap * sizeof(*r));
		}
		row = &r[(*n)++];
		memset(row, 0, sizeof(*row));
		copy_text(row->user_id, sizeof(row->user_id), st, 0);
		copy_text(row->username, sizeof(row->username), st, 1);
		copy_text(row->kind, sizeof(row->kind), st, 2);
		copy_text(row->name, sizeof(row->name), st, 3);
		copy_text(row->scheme, sizeof(row->scheme), st, 4);
		row->has_key_id = sqlite3_column_type(st, 5) != SQLITE_NULL;
		copy_text(row->key_id, sizeof(row->key_id), st, 5);
		row->len = (size_t)sqlite3_column_bytes(st, 6);
		blob = sqlite3_column_blob(st, 6);
		row->value = xmalloc(row->len + 1);
		if (row->len > 0)
			memcpy(row->value, blob, row->len);
		row->env = sqlite3_column_int(st, 7) != 0;
		copy_text(row->updated_at, sizeof(row->updated_at), st, 8);
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		rows_free(r, *n);
		*out = NULL;
		*n = 0;
		return db_fail("sealed values read");
	}
	*out = r;
	return 0;
}

/* Rows of one user and kind (name NULL: all names), by name. */
static int
rows_load(const char *user_id, const char *kind, const char *name,
    struct vrow **out, size_t *n)
{
	static const char *sql_all = "SELECT " ROW_COLUMNS " FROM "
	    "sealed_values v JOIN users u ON u.id = v.user_id "
	    "WHERE v.user_id = ?1 AND v.kind = ?2 ORDER BY v.name";
	static const char *sql_one = "SELECT " ROW_COLUMNS " FROM "
	    "sealed_values v JOIN users u ON u.id = v.user_id "
	    "WHERE v.user_id = ?1 AND v.kind = ?2 AND v.name = ?3";
	sqlite3_stmt *st;

	if ((st = db_stmt(name ? sql_one : sql_all)) == NULL)
		return -1;
	sqlite3_bind_text(st, 1, user_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
	if (name)
		sqlite3_bind_text(st, 3, name, -1, SQLITE_STATIC);
	return rows_collect(st, out, n);
}

/*
 * Write a freshly sealed value over the one read, only if the row still
 * holds what was read: a concurrent PUT wins over a re-encryption.
 */
static int
row_reseal(const struct vrow *r, const char *pt, size_t ptlen)
{
	static const char *sql = "UPDATE sealed_values SET scheme = ?1, "
	    "key_id = ?2, value = ?3 WHERE user_id = ?4 AND kind = ?5 AND "
	    "name = ?6 AND value = ?7";
	struct sealed_buf	 b;
	sqlite3_stmt		*st;
	int			 rc;

	if (crypto_seal(crypto_server_keyring(), r->kind, r->user_id, r->name,
	    pt, ptlen, &b) == -1)
		return -1;
	if ((st = db_stmt(sql)) == NULL) {
		crypto_sealed_free(&b);
		return -1;
	}
	sqlite3_bind_text(st, 1, b.scheme, -1, SQLITE_STATIC);
	if (b.key_id[0] != '\0')
		sqlite3_bind_text(st, 2, b.key_id, -1, SQLITE_STATIC);
	sqlite3_bind_blob(st, 3, b.data, (int)b.len, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, r->user_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, r->kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 6, r->name, -1, SQLITE_STATIC);
	sqlite3_bind_blob(st, 7, r->value, (int)r->len, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	crypto_sealed_free(&b);
	if (rc != SQLITE_DONE)
		return db_fail("sealed value rewrite");
	return 0;
}

/*
 * Sealing a value stored in plaintext: zero the space the old cell frees
 * and fold the WAL back into the file, so the plaintext does not linger in
 * a freed page or an old WAL frame. Best effort; a reader holding the WAL
 * only delays the truncation.
 */
static int
row_seal_plaintext(const struct vrow *r, const char *pt, size_t ptlen)
{
	int rc;

	(void)db_exec("PRAGMA secure_delete = ON");
	rc = row_reseal(r, pt, ptlen);
	(void)db_exec("PRAGMA secure_delete = OFF");
	if (rc == 0)
		(void)sqlite3_exec(db_conn(), "PRAGMA wal_checkpoint(TRUNCATE)",
		    NULL, NULL, NULL);
	return rc;
}

/*
 * Open one row; reseal it when it is due. 0 with *pt allocated, -1 with the
 * reason in err (and one log line naming the value, never showing it).
 * *state and *rewritten, when not NULL, say what was found and whether a
 * due reseal was stored.
 */
static int
row_open(const struct vrow *r, char **pt, size_t *ptlen, enum seal_state *state,
    bool *rewritten, char *err, size_t errlen)
{
	struct sealed	in = {
		.scheme = r->scheme,
		.key_id = r->has_key_id ? r->key_id : NULL,
		.data = r->value,
		.len = r->len,
	};
	enum seal_state	s;

	if (crypto_open(crypto_server_keyring(), r->kind, r->user_id, r->name,
	    &in, pt, ptlen, &s, err, errlen) == -1) {
		log_warn("user %s: %s '%s' cannot be opened: %s", r->username,
		    r->kind, r->name, err);
		return -1;
	}
	if (state != NULL)
		*state = s;
	if (rewritten != NULL)
		*rewritten = false;
	if (s == SEAL_OLD_KEY || s == SEAL_PLAINTEXT) {
		if ((s == SEAL_PLAINTEXT ? row_seal_plaintext(r, *pt, *ptlen) :
		    row_reseal(r, *pt, *ptlen)) == 0) {
			if (rewritten != NULL)
				*rewritten = true;
			log_info("user %s: %s '%s' %s under the current key",
			    r->username, r->kind, r->name, s == SEAL_OLD_KEY ?
			    "re-encrypted" : "encrypted");
		} else
			log_warn("user %s: %s '%s' could not be resealed; it "
			    "stays readable and is tried again on the next read",
			    r->username, r->kind, r->name);
	}
	return 0;
}

int
vault_put(const char *user_id, const char *kind, const char *name,
    const char *value, size_t len, bool env)
{
	static const char *sql = "INSERT INTO sealed_values (user_id, kind, "
	    "name, scheme, key_id, value, env, updated_at) VALUES "
	    "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (user_id, kind, name) "
	    "DO UPDATE SET scheme = excluded.scheme, key_id = excluded.key_id, "
	    "value = excluded.value, env = excluded.env, "
	    "updated_at = excluded.updated_at";
	struct sealed_buf	 b;
	sqlite3_stmt		*st;
	char			 ts[TIME_BUFSZ];
	int			 rc;

	if (crypto_seal(crypto_server_keyring(), kind, user_id, name, value,
	    len, &b) == -1)
		return -1;
	time_rfc3339(ts, now_ms());
	if ((st = db_stmt(sql)) == NULL) {
		crypto_sealed_free(&b);
		return -1;
	}
	sqlite3_bind_text(st, 1, user_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, b.scheme, -1, SQLITE_STATIC);
	if (b.key_id[0] != '\0')
		sqlite3_bind_text(st, 5, b.key_id, -1, SQLITE_STATIC);
	sqlite3_bind_blob(st, 6, b.data, (int)b.len, SQLITE_STATIC);
	sqlite3_bind_int(st, 7, env ? 1 : 0);
	sqlite3_bind_text(st, 8, ts, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	crypto_sealed_free(&b);
	if (rc != SQLITE_DONE)
		return db_fail("sealed value write");
	return 0;
}

int
vault_get(const char *user_id, const char *kind, const char *name,
    char **value, size_t *len, char *err, size_t errlen)
{
	struct vrow	*r;
	size_t		 n;
	int		 rc;

	*value = NULL;
	*len = 0;
	if (rows_load(user_id, kind, name, &r, &n) == -1) {
		snprintf(err, errlen, "the store could not be read");
		return -1;
	}
	if (n == 0) {
		free(r);
		return 1;
	}
	rc = row_open(&r[0], value, len, NULL, NULL, err, errlen);
	rows_free(r, n);
	return rc;
}

int
vault_delete(const char *user_id, const char *kind, const char *name)
{
	static const char *sql = "DELETE FROM sealed_values WHERE user_id = ?1 "
	    "AND kind = ?2 AND name = ?3";
	sqlite3_stmt	*st;
	int		 rc;

	if ((st = db_stmt(sql)) == NULL)
		return -1;
	sqlite3_bind_text(st, 1, user_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return db_fail("sealed value delete");
	return sqlite3_changes(db_conn()) > 0 ? 0 : 1;
}

int
vault_list(const char *user_id, const char *kind, struct vault_entry **out,
    size_t *n)
{
	struct vrow	*r;
	size_t		 i;
	char		*pt;
	size_t		 ptlen;

	*out = NULL;
	*n = 0;
	if (rows_load(user_id, kind, NULL, &r, n) == -1)
		return -1;
	*out = xcalloc(*n ? *n : 1, sizeof(**out));
	for (i = 0; i < *n; i++) {
		struct vault_entry *e = &(*out)[i];

		strlcpy_(e->name, r[i].name, sizeof(e->name));
		strlcpy_(e->updated_at, r[i].updated_at, sizeof(e->updated_at));
		e->env = r[i].env;
		if (row_open(&r[i], &pt, &ptlen, NULL, NULL, e->error,
		    sizeof(e->error)) == 0)
			crypto_plain_free(pt, ptlen);
	}
	rows_free(r, *n);
	return 0;
}

int
vault_rotate_all(struct rotate_counts *c,
    void (*failed)(const char *, const char *, const char *, const char *,
    void *), void *arg)
{
	static const char *sql = "SELECT " ROW_COLUMNS " FROM sealed_values v "
	    "JOIN users u ON u.id = v.user_id ORDER BY u.username, v.kind, "
	    "v.name";
	struct vrow	*r;
	sqlite3_stmt	*st;
	size_t		 n, i, ptlen;
	enum seal_state	 s;
	bool		 rewritten;
	char		*pt, err[256];

	memset(c, 0, sizeof(*c));
	if ((st = db_stmt(sql)) == NULL || rows_collect(st, &r, &n) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		if (row_open(&r[i], &pt, &ptlen, &s, &rewritten, err,
		    sizeof(err)) == -1) {
			c->failed++;
			failed(r[i].username, r[i].kind, r[i].name, err, arg);
			continue;
		}
		crypto_plain_free(pt, ptlen);
		switch (s) {
		case SEAL_CURRENT:
			c->current++;
			break;
		case SEAL_OLD_KEY:
		case SEAL_PLAINTEXT:
			if (!rewritten) {
				c->failed++;
				failed(r[i].username, r[i].kind, r[i].name,
				    "it opens but could not be written back", arg);
			} else if (s == SEAL_OLD_KEY)
				c->resealed++;
			else
				c->plaintext++;
			break;
		case SEAL_PLAIN_NO_KEY:
			c->failed++;
			failed(r[i].username, r[i].kind, r[i].name,
			    "there is no current key to seal it with", arg);
			break;
		}
	}
	rows_free(r, n);
	return 0;
}

/* The user's secrets, opened; the ones that do not open are left out. */
static int
secrets_open_all(const char *user_id, bool env_only, struct secret_value **out,
    size_t *n)
{
	struct vrow	*r;
	size_t		 nr, i, len;
	char		*pt, err[256];

	*out = NULL;
	*n = 0;
	if (rows_load(user_id, VAULT_SECRET, NULL, &r, &nr) == -1)
		return -1;
	*out = xcalloc(nr ? nr : 1, sizeof(**out));
	for (i = 0; i < nr; i++) {
		if (env_only && !r[i].env)
			continue;
		if (row_open(&r[i], &pt, &len, NULL, NULL, err, sizeof(err)) == -1)
			continue;
		(*out)[*n].name = xstrdup(r[i].name);
		(*out)[*n].value = pt;
		(*out)[*n].len = len;
		(*n)++;
	}
	rows_free(r, nr);
	return 0;
}

static void
secret_values_free(struct secret_value *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free((char *)v[i].name);
		crypto_plain_free((char *)v[i].value, v[i].len);
	}
	free(v);
}

int
secrets_sandbox_env(const char *user_id, struct sandbox_env **out, size_t *n)
{
	struct secret_value	*v;
	size_t			 nv, i;

	*out = NULL;
	*n = 0;
	if (secrets_open_all(user_id, true, &v, &nv) == -1)
		return -1;
	*out = xcalloc(nv ? nv : 1, sizeof(**out));
	for (i = 0; i < nv; i++) {
		/* Moved, not copied: the plaintext exists once. */
		(*out)[i].name = v[i].name;
		(*out)[i].value = v[i].value;
	}
	*n = nv;
	free(v);
	return 0;
}

void
secrets_env_free(struct sandbox_env *env, size_t n)
{
	size_t i;

	for (i = 0; env != NULL && i < n; i++) {
		free((char *)env[i].name);
		if (env[i].value != NULL)
			crypto_plain_free((char *)env[i].value,
			    strlen(env[i].value));
	}
	free(env);
}

static int
by_length_desc(const void *a, const void *b)
{
	const struct secret_value *x = a, *y = b;

	return x->len < y->len ? 1 : x->len > y->len ? -1 : 0;
}

size_t
redact_values(const struct secret_value *v, size_t n, char **text, size_t *len)
{
	struct secret_value	*s;
	size_t			 ns = 0, i, j, o = 0, cap, hits = 0;
	char			*in = *text, *outb, tag[SECRET_NAME_MAX + 16];
	bool			 first[256] = { false };

	s = xcalloc(n ? n : 1, sizeof(*s));
	for (i = 0; i < n; i++)
		if (v[i].len >= SECRET_REDACT_MIN) {
			s[ns++] = v[i];
			first[(unsigned char)v[i].value[0]] = true;
		}
	if (ns == 0) {
		free(s);
		return 0;
	}
	/* Longest first, so a secret containing another is replaced whole. */
	qsort(s, ns, sizeof(*s), by_length_desc);
	cap = *len + 64;
	outb = xmalloc(cap);
	for (i = 0; i < *len; ) {
		const struct secret_value *m = NULL;

		if (first[(unsigned char)in[i]])
			for (j = 0; j < ns; j++)
				if (s[j].len <= *len - i &&
				    memcmp(in + i, s[j].value, s[j].len) == 0) {
					m = &s[j];
					break;
				}
		if (m == NULL) {
			if (o + 1 >= cap)
				outb = xrealloc(outb, cap *= 2);
			outb[o++] = in[i++];
			continue;
		}
		snprintf(tag, sizeof(tag), "[secret:%s]", m->name);
		while (o + strlen(tag) + 1 >= cap)
			outb = xrealloc(outb, cap *= 2);
		memcpy(outb + o, tag, strlen(tag));
		o += strlen(tag);
		i += m->len;
		hits++;
	}
	outb[o] = '\0';
	free(s);
	if (hits == 0) {
		free(outb);
		return 0;
	}
	sodium_memzero(in, *len);
	free(in);
	*text = outb;
	*len = o;
	return hits;
}

int
secrets_redact(const char *user_id, char **text, size_t *len)
{
	struct secret_value	*v;
	size_t			 n;

	if (secrets_open_all(user_id, false, &v, &n) == -1) {
		/* Fail closed: output that was not checked is not passed on. */
		free(*text);
		*text = xstrdup(WITHHELD);
		*len = strlen(WITHHELD);
		return -1;
	}
	redact_values(v, n, text, len);
	secret_values_free(v, n);
	return 0;
}
