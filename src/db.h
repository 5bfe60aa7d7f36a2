/*
 * db.h — SQLite storage: one database file under <instance>/data, WAL mode,
 * schema migrations applied in order at start, one connection per thread
 * (opened lazily) with a cache of prepared statements. Callers write SQL only
 * as static strings with bound parameters; nothing builds SQL from input.
 */
#ifndef CDM_DB_H
#define CDM_DB_H

#include <sqlite3.h>

/* Open PATH once from the main thread, create it 0600, apply migrations. */
int		 db_init(const char *path, char *err, size_t errlen);
/* This thread's connection, opened on first use; NULL on failure. */
sqlite3		*db_conn(void);
/* Close this thread's connection (a stream thread that no longer needs it). */
void		 db_release(void);
/* Close the calling thread's connection and forget the path. */
void		 db_shutdown(void);

/*
 * A prepared statement for the static string SQL on this thread's connection,
 * reset and with its bindings cleared. Do not finalize it.
 */
sqlite3_stmt	*db_stmt(const char *sql);

int		 db_exec(const char *sql);	/* 0 / -1 */
int		 db_begin(void);		/* BEGIN IMMEDIATE */
int		 db_commit(void);
void		 db_rollback(void);

/* Was the last failure on this thread "database busy or locked"? */
int		 db_last_busy(void);
/* Log the connection's last error with a context word; returns -1. */
int		 db_fail(const char *what);

#endif
