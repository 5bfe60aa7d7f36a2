/*
 * users.c — the users table. Password checks always run one argon2id
 * verification, against a fixed dummy hash for unknown names, so the answer
 * time does not tell whether a name exists.
 */
#include <pthread.h>
#include <string.h>
#include <json-c/json.h>

#include "db.h"
#include "log.h"
#include "password.h"
#include "users.h"

int
username_is_valid(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++) {
		char c = s[i];
		if (i >= USERNAME_MAX)
			return 0;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-' ||
		    c == '@'))
			return 0;
	}
	return i > 0;
}

static void
row_to_user(sqlite3_stmt *st, struct user *u)
{
	strlcpy_(u->id, (const char *)sqlite3_column_text(st, 0), sizeof(u->id));
	strlcpy_(u->username, (const char *)sqlite3_column_text(st, 1),
	    sizeof(u->username));
	u->is_admin = sqlite3_column_int(st, 2) != 0;
	strlcpy_(u->created_at, (const char *)sqlite3_column_text(st, 3),
	    sizeof(u->created_at));
}

int
users_create(const char *username, const char *password, bool is_admin,
    struct user *out)
{
	static const char *sql = "INSERT INTO users (id, username, password_hash,"
	    " is_admin, created_at) VALUES (?1, ?2, ?3, ?4, ?5)";
	char		 hash[crypto_pwhash_STRBYTES];
	sqlite3_stmt	*st;
	int		 rc;

	if (password_hash(password, hash) == -1) {
		log_error("%s: password hashing failed", __func__);
		return -1;
	}
	memset(out, 0, sizeof(*out));
	random_id(out->id);
	strlcpy_(out->username, username, sizeof(out->username));
	out->is_admin = is_admin;
	time_rfc3339(out->created_at, now_ms());
	if ((st = db_stmt(sql)) == NULL)
		return -1;
	sqlite3_bind_text(st, 1, out->id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, out->username, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, hash, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 4, is_admin);
	sqlite3_bind_text(st, 5, out->created_at, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_CONSTRAINT_UNIQUE) {
		sqlite3_reset(st);
		return 1;
	}
	if (rc != SQLITE_DONE) {
		db_fail("user insert");
		sqlite3_reset(st);
		return -1;
	}
	sqlite3_reset(st);
	return 0;
}

int
users_get(const char *id, struct user *out)
{
	static const char *sql = "SELECT id, username, is_admin, created_at "
	    "FROM users WHERE id = ?1";
	sqlite3_stmt	*st;
	int		 rc;

	if ((st = db_stmt(sql)) == NULL)
		return -1;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		row_to_user(st, out);
		sqlite3_reset(st);
		return 0;
	}
	sqlite3_reset(st);
	if (rc == SQLITE_DONE)
		return 1;
	return db_fail("user lookup");
}

/* A valid argon2id hash of a random string: verifying against it costs the
 * same as a real check and never succeeds. */
static char		dummy_hash[crypto_pwhash_STRBYTES];
static pthread_once_t	dummy_once = PTHREAD_ONCE_INIT;

static void
dummy_init(void)
{
	char pw[33];

	random_id(pw);
	if (password_hash(pw, dummy_hash) == -1)
		dummy_hash[0] = '\0';
}

int
users_check_password(const char *username, const char *password,
    struct user *out)
{
	static const char *sql = "SELECT id, username, is_admin, created_at, "
	    "password_hash FROM users WHERE username = ?1";
	char		 hash[crypto_pwhash_STRBYTES];
	sqlite3_stmt	*st;
	int		 rc, found = 0;

	if ((st = db_stmt(sql)) == NULL)
		return -1;
	sqlite3_bind_text(st, 1, username, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		row_to_user(st, out);
		strlcpy_(hash, (const char *)sqlite3_column_text(st, 4),
		    sizeof(hash));
		found = 1;
	} else if (rc != SQLITE_DONE) {
		sqlite3_reset(st);
		return db_fail("login lookup");
	}
	sqlite3_reset(st);
	if (!found) {
		pthread_once(&dummy_once, dummy_init);
		(void)password_verify(dummy_hash, password);
		return 1;
	}
	return password_verify(hash, password) ? 0 : 1;
}

struct json_object *
user_to_json(const struct user *u)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "id", json_object_new_string(u->id));
	json_object_object_add(o, "username", json_object_new_string(u->username));
	json_object_object_add(o, "is_admin", json_object_new_boolean(u->is_admin));
	return o;
}
