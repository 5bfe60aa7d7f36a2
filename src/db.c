/*
 * db.c — SQLite connections and migrations. Each thread gets its own
 * connection (SQLite serialises writers itself; WAL lets readers proceed),
 * kept in thread-local storage with a small statement cache keyed by the SQL
 * string's address, because every statement here is a static string.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db.h"
#include "log.h"
#include "migrations.h"
#include "util.h"

#define STMT_CACHE	48
#define BUSY_TIMEOUT_MS	5000

struct db_thread {
	sqlite3		*db;
	struct {
		const char	*sql;
		sqlite3_stmt	*st;
	} cache[STMT_CACHE];
	int		 last_busy;
};

static char		 db_path[4096];
static pthread_key_t	 db_key;
static pthread_once_t	 db_once = PTHREAD_ONCE_INIT;

static void
db_thread_free(void *p)
{
	struct db_thread	*t = p;
	size_t			 i;

	if (t == NULL)
		return;
	for (i = 0; i < STMT_CACHE; i++)
		if (t->cache[i].st)
			sqlite3_finalize(t->cache[i].st);
	if (t->db)
		sqlite3_close_v2(t->db);
	free(t);
}

static void
db_key_create(void)
{
	pthread_key_create(&db_key, db_thread_free);
}

static sqlite3 *
db_open(const char *path)
{
	sqlite3	*db = NULL;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		log_error("sqlite open %s: %s", path,
		    db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close_v2(db);
		return NULL;
	}
	sqlite3_busy_timeout(db, BUSY_TIMEOUT_MS);
	sqlite3_extended_result_codes(db, 1);
	/* NORMAL is durable across process crashes in WAL mode. */
	if (sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
	    "PRAGMA foreign_keys=ON; PRAGMA cache_size=-512;", NULL, NULL,
	    NULL) != SQLITE_OK) {
		log_error("sqlite pragmas: %s", sqlite3_errmsg(db));
		sqlite3_close_v2(db);
		return NULL;
	}
	return db;
}

static struct db_thread *
db_thread(void)
{
	struct db_thread *t;

	pthread_once(&db_once, db_key_create);
	if ((t = pthread_getspecific(db_key)) != NULL && t->db != NULL)
		return t;
	if (t == NULL) {
		t = xcalloc(1, sizeof(*t));
		pthread_setspecific(db_key, t);
	}
	if (db_path[0] == '\0' || (t->db = db_open(db_path)) == NULL)
		return NULL;
	return t;
}

sqlite3 *
db_conn(void)
{
	struct db_thread *t = db_thread();

	return t ? t->db : NULL;
}

void
db_release(void)
{
	struct db_thread *t;

	pthread_once(&db_once, db_key_create);
	if ((t = pthread_getspecific(db_key)) == NULL)
		return;
	pthread_setspecific(db_key, NULL);
	db_thread_free(t);
}

void
db_shutdown(void)
{
	db_release();
	db_path[0] = '\0';
}

static int
db_apply_migrations(sqlite3 *db, char *err, size_t errlen)
{
	sqlite3_stmt	*st;
	int		 version = 0;
	size_t		 i;
	char		*msg = NULL;

	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
		goto fail;
	if (sqlite3_step(st) == SQLITE_ROW)
		version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if ((size_t)version > n_migrations) {
		snprintf(err, errlen, "database schema version %d is newer than "
		    "this program (%zu): refusing to touch it", version, n_migrations);
		return -1;
	}
	for (i = (size_t)version; i < n_migrations; i++) {
		char pragma[64];

		snprintf(pragma, sizeof(pragma), "PRAGMA user_version=%zu;", i + 1);
		/* Each migration and its version bump commit together. */
		if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, &msg) != SQLITE_OK ||
		    sqlite3_exec(db, migrations[i].sql, NULL, NULL, &msg) != SQLITE_OK ||
		    sqlite3_exec(db, pragma, NULL, NULL, &msg) != SQLITE_OK ||
		    sqlite3_exec(db, "COMMIT", NULL, NULL, &msg) != SQLITE_OK) {
			snprintf(err, errlen, "migration %s: %s", migrations[i].name,
			    msg ? msg : sqlite3_errmsg(db));
			sqlite3_free(msg);
			sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
			return -1;
		}
		log_info("applied schema migration %s", migrations[i].name);
	}
	return 0;
fail:
	snprintf(err, errlen, "reading schema version: %s", sqlite3_errmsg(db));
	return -1;
}

int
db_init(const char *path, char *err, size_t errlen)
{
	sqlite3	*db;
	int	 fd, rc;

	if (strlen(path) >= sizeof(db_path)) {
		snprintf(err, errlen, "database path too long");
		return -1;
	}
	/* Create the file ourselves so it is 0600 from the first byte. */
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	close(fd);
	if ((db = db_open(path)) == NULL) {
		snprintf(err, errlen, "%s: cannot open the database", path);
		return -1;
	}
	rc = db_apply_migrations(db, err, errlen);
	sqlite3_close_v2(db);
	if (rc == 0)
		strlcpy_(db_path, path, sizeof(db_path));
	return rc;
}

sqlite3_stmt *
db_stmt(const char *sql)
{
	struct db_thread	*t = db_thread();
	size_t			 i, slot;
	sqlite3_stmt		*st;

	if (t == NULL)
		return NULL;
	t->last_busy = 0;
	slot = ((uintptr_t)sql >> 4) % STMT_CACHE;
	for (i = 0; i < STMT_CACHE; i++) {
		size_t j = (slot + i) % STMT_CACHE;

		if (t->cache[j].sql == sql) {
			sqlite3_reset(t->cache[j].st);
			sqlite3_clear_bindings(t->cache[j].st);
			return t->cache[j].st;
		}
		if (t->cache[j].sql == NULL) {
			slot = j;
			break;
		}
	}
	if (sqlite3_prepare_v3(t->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st,
	    NULL) != SQLITE_OK) {
		db_fail("prepare");
		return NULL;
	}
	if (i == STMT_CACHE) {
		/* Cache full: evict the slot we hashed to. */
		sqlite3_finalize(t->cache[slot].st);
	}
	t->cache[slot].sql = sql;
	t->cache[slot].st = st;
	return st;
}

int
db_fail(const char *what)
{
	struct db_thread	*t;
	int			 code;

	pthread_once(&db_once, db_key_create);
	t = pthread_getspecific(db_key);

	if (t == NULL || t->db == NULL) {
		log_error("database %s: no connection", what);
		return -1;
	}
	code = sqlite3_errcode(t->db) & 0xff;
	t->last_busy = (code == SQLITE_BUSY || code == SQLITE_LOCKED);
	log_error("database %s: %s", what, sqlite3_errmsg(t->db));
	return -1;
}

int
db_last_busy(void)
{
	struct db_thread *t;

	pthread_once(&db_once, db_key_create);
	t = pthread_getspecific(db_key);
	return t ? t->last_busy : 0;
}

int
db_exec(const char *sql)
{
	sqlite3 *db = db_conn();

	if (db == NULL)
		return -1;
	if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return db_fail(sql);
	return 0;
}

int
db_begin(void)
{
	return db_exec("BEGIN IMMEDIATE");
}

int
db_commit(void)
{
	if (db_exec("COMMIT") == -1) {
		db_rollback();
		return -1;
	}
	return 0;
}

void
db_rollback(void)
{
	sqlite3 *db = db_conn();

	if (db != NULL && !sqlite3_get_autocommit(db))
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
}
