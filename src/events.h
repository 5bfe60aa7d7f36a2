/*
 * events.h — the conversation event log. Appending writes the event to SQLite
 * and, once the transaction commits, publishes it on the live bus, all under
 * one lock so that ids are published in the order they were assigned.
 * Replaying reads the log back after a given id.
 */
#ifndef CDM_EVENTS_H
#define CDM_EVENTS_H

#include <stdint.h>

struct json_object;

/* Take the event lock and BEGIN IMMEDIATE. 0 / -1 (lock released on -1). */
int	events_begin(void);
/*
 * Append an event to the open transaction; data is serialised, not consumed.
 * Returns the new event id, or -1.
 */
int64_t	events_add(const char *conv_id, const char *type,
	    struct json_object *data);
/* Commit, publish what was added, release the lock. 0 / -1 (rolled back). */
int	events_commit(void);
/* Roll back and release the lock; nothing is published. */
void	events_abort(void);

/* Convenience: one event in its own transaction. */
int64_t	events_append(const char *conv_id, const char *type,
	    struct json_object *data);

typedef int (*events_fn)(void *arg, int64_t id, const char *type,
	    const char *data);
/*
 * Call fn for each event of the conversation with id > after, in order, at
 * most limit of them. fn returning -1 stops the replay. Returns the number of
 * events passed to fn, or -1 on a database error.
 */
int	events_replay(const char *conv_id, int64_t after, int limit,
	    events_fn fn, void *arg);

#endif
