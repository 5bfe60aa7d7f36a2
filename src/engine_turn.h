/*
 * engine_turn.h — private to the engine: one turn as a worker runs it
 * (engine_turn.c, its tool calls engine_calls.c), and the task the pool
 * (engine.c) keeps for it.
 */
#ifndef CDM_ENGINE_TURN_H
#define CDM_ENGINE_TURN_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

struct task {
	char		 conv_id[ID_BUFSZ];
	char		 turn_id[ID_BUFSZ];
	char		 user_id[ID_BUFSZ];
	volatile int	 abort;		/* stop now: cancel or shutdown */
	volatile int	 cancelled;	/* ... and it was a cancel */
	struct task	*next;		/* the queue */
	struct task	*next_all;	/* every task the engine holds */
};

/* Run the turn to its end (or until t->abort). */
void	turn_run(struct task *t);

/* The state of a running turn beyond its task. */
struct turn {
	struct task	*t;
	char		*pending;	/* text not yet in a message.delta */
	size_t		 plen, pcap;
	int64_t		 last_flush;
	int		 steps;
	char		 finish_reason[32];
	long long	 usage[3];	/* prompt, completion, total tokens */
	int		 have_usage;
};

struct json_object;
struct llm_call;
struct sqlite3_stmt;

/*
 * Storage both halves of a turn use (engine_turn.c). Rows and events are
 * written inside one events_begin()..events_commit() transaction.
 */
/* {"turn_id": ...}, the start of every turn event's data. */
struct json_object *turn_event_data(const char *turn_id);
/* Add an event to the open transaction and drop data. -1 on failure. */
int	turn_add_event(const char *conv_id, const char *type,
	    struct json_object *data);
/* sqlite3_step to SQLITE_DONE and reset; -1 (logged as what) otherwise. */
int	turn_step_done(struct sqlite3_stmt *st, const char *what);
/* A message row (an assistant's, with its tool calls, or a tool's). */
int	turn_message_insert(struct turn *tu, const char *id, const char *role,
	    const char *content, const char *tool_calls, const char *tool_call_id,
	    const char *ts);

/* A tool call (engine_calls.c): stored with its tool.call event. */
int	turn_call_insert(struct turn *tu, const struct llm_call *c,
	    const char *args);
/* Gate, run and store one call's result. -1: the turn is being aborted. */
int	turn_call_run(struct turn *tu, const struct llm_call *c,
	    const char *args);

/* Mark turns a previous process left queued or running as failed. */
int	turns_recover(void);

#endif
