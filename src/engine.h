/*
 * engine.h — the agent engine: a pool of worker threads running turns. A
 * turn is a task, not a request: POST …/messages stores the message and a
 * queued turn, then hands it here; the turn calls the model, runs its tools
 * (parking for approvals), and ends with turn.completed, turn.failed or
 * turn.cancelled, whether or not anybody is watching.
 */
#ifndef CDM_ENGINE_H
#define CDM_ENGINE_H

#include <stddef.h>

/*
 * Main thread, after storage is open and before requests are served: check
 * the engine's configuration, mark turns left queued or running by a
 * previous process as failed ("interrupted by server restart"), start the
 * workers. 0, or -1 with a sentence in err.
 */
int	engine_start(char *err, size_t errlen);
/*
 * Stop taking turns, abort running ones without recording an end (the next
 * start does, as for a crash) and join the workers.
 */
void	engine_stop(void);

/* Run a stored, queued turn. */
void	engine_enqueue(const char *conv_id, const char *turn_id,
	    const char *user_id);
/*
 * Ask a queued or running turn to stop; it ends with turn.cancelled within
 * about a second. 1 when the engine had it, 0 when it does not (the caller
 * then cancels the stored turn itself).
 */
int	engine_cancel(const char *conv_id, const char *turn_id);

/* Turns queued or running right now (for status pages and tests). */
int	engine_active_turns(void);

#endif
