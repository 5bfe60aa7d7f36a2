/*
 * engine_turn.h — private to the engine: one turn as a worker runs it
 * (engine_turn.c), and the task the pool (engine.c) keeps for it.
 */
#ifndef CDM_ENGINE_TURN_H
#define CDM_ENGINE_TURN_H

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

/* Mark turns a previous process left queued or running as failed. */
int	turns_recover(void);

#endif
