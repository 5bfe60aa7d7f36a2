/*
 * engine.c — the worker pool. Turns wait in a FIFO; engine.workers threads
 * take them one at a time. Every task the engine holds is also on one list,
 * so a cancel can find a turn whether it is queued or running. What a turn
 * does is engine_turn.c; this file only schedules, cancels and stops.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "approvals.h"
#include "db.h"
#include "engine.h"
#include "engine_turn.h"
#include "llm.h"
#include "log.h"
#include "tools.h"

#define WORKER_STACK	(1024 * 1024)	/* regcomp and json-c recursion */

static pthread_mutex_t	 mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t	 cv = PTHREAD_COND_INITIALIZER;
static struct task	*q_head, *q_tail;	/* waiting, guarded by mu */
static struct task	*all;			/* queued and running */
static int		 nactive;
static int		 stopping;
static pthread_t	*threads;
static int		 nthreads;

static void
all_remove(struct task *t)
{
	struct task **pp;

	for (pp = &all; *pp != NULL; pp = &(*pp)->next_all)
		if (*pp == t) {
			*pp = t->next_all;
			break;
		}
}

static void *
worker(void *arg)
{
	struct task *t;

	(void)arg;
	for (;;) {
		pthread_mutex_lock(&mu);
		while (!stopping && q_head == NULL)
			pthread_cond_wait(&cv, &mu);
		if (stopping) {
			pthread_mutex_unlock(&mu);
			break;
		}
		t = q_head;
		q_head = t->next;
		if (q_head == NULL)
			q_tail = NULL;
		pthread_mutex_unlock(&mu);

		turn_run(t);

		pthread_mutex_lock(&mu);
		all_remove(t);
		nactive--;
		pthread_mutex_unlock(&mu);
		free(t);
	}
	db_release();
	return NULL;
}

int
engine_start(char *err, size_t errlen)
{
	pthread_attr_t	attr;
	int		i;

	if (approval_rules_load(app.cfg.tools.approval_rules, err, errlen) == -1)
		return -1;
	if (tools_init() == -1) {
		snprintf(err, errlen, "the tool registry is broken");
		return -1;
	}
	if (llm_global_init() == -1) {
		snprintf(err, errlen, "libcurl failed to initialise");
		return -1;
	}
	if (turns_recover() == -1) {
		snprintf(err, errlen, "cannot mark interrupted turns as failed");
		return -1;
	}
	threads = xcalloc((size_t)app.cfg.engine.workers, sizeof(*threads));
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, WORKER_STACK);
	for (i = 0; i < app.cfg.engine.workers; i++) {
		if (pthread_create(&threads[i], &attr, worker, NULL) != 0) {
			snprintf(err, errlen, "cannot start engine workers");
			pthread_attr_destroy(&attr);
			engine_stop();
			return -1;
		}
		nthreads++;
	}
	pthread_attr_destroy(&attr);
	log_info("engine: %d workers", nthreads);
	return 0;
}

void
engine_stop(void)
{
	struct task	*t, *next;
	int		 i;

	pthread_mutex_lock(&mu);
	stopping = 1;
	for (t = all; t != NULL; t = t->next_all)
		t->abort = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	approval_wake_all();
	for (i = 0; i < nthreads; i++)
		pthread_join(threads[i], NULL);
	free(threads);
	threads = NULL;
	nthreads = 0;
	/* Queued turns stay queued in storage; the next start fails them. */
	for (t = q_head; t != NULL; t = next) {
		next = t->next;
		free(t);
	}
	q_head = q_tail = NULL;
	all = NULL;
	tools_cleanup();
	approval_rules_free();
	llm_global_cleanup();
}

void
engine_enqueue(const char *conv_id, const char *turn_id, const char *user_id)
{
	struct task *t = xcalloc(1, sizeof(*t));

	strlcpy_(t->conv_id, conv_id, sizeof(t->conv_id));
	strlcpy_(t->turn_id, turn_id, sizeof(t->turn_id));
	strlcpy_(t->user_id, user_id, sizeof(t->user_id));
	pthread_mutex_lock(&mu);
	if (stopping) {
		pthread_mutex_unlock(&mu);
		free(t);
		return;
	}
	if (q_tail)
		q_tail->next = t;
	else
		q_head = t;
	q_tail = t;
	t->next_all = all;
	all = t;
	nactive++;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
}

int
engine_cancel(const char *conv_id, const char *turn_id)
{
	struct task	*t;
	int		 found = 0;

	pthread_mutex_lock(&mu);
	for (t = all; t != NULL; t = t->next_all)
		if (strcmp(t->turn_id, turn_id) == 0 &&
		    strcmp(t->conv_id, conv_id) == 0) {
			t->cancelled = 1;
			t->abort = 1;
			found = 1;
			break;
		}
	pthread_mutex_unlock(&mu);
	if (found)
		approval_wake_all();
	return found;
}

int
engine_active_turns(void)
{
	int n;

	pthread_mutex_lock(&mu);
	n = nactive;
	pthread_mutex_unlock(&mu);
	return n;
}
