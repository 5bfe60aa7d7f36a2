/*
 * sandbox_client.h — what the two halves of the server's side of the
 * sandbox helper share: sandbox_client.c owns the helper (its process,
 * socket and reply routing), sandbox_run.c sends it requests. Internal to
 * them; the rest of the server uses sandbox.h.
 */
#ifndef CDM_SANDBOX_CLIENT_H
#define CDM_SANDBOX_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

/* One request in flight; lives on its caller's stack. */
struct waiter {
	uint32_t	 id;
	int		 spawned, exited, refused, dead;
	int		 started, exit_code, signal, timed_out, killed;
	char		 error[256];
	int		 wake;		/* eventfd: a reply came, or the helper died */
	struct waiter	*next;
};

/*
 * Give w (its wake eventfd made) a fresh id and route the helper's replies
 * to it. -1 with the reason in err when the helper cannot be used.
 */
int		sbx_waiter_add(struct waiter *w, char *err, size_t len);
void		sbx_waiter_remove(struct waiter *w);
/* 1, and w no longer routed, when its request ended (or force). */
int		sbx_waiter_done(struct waiter *w, int force);
/* sbx_send() under the lock that keeps datagrams whole between threads. */
int		sbx_send_locked(enum sbx_type type, uint32_t id,
		    const char *body, const int *fds, int nfds);
/* An id for a notice (no reply); 0 when none should be sent. */
uint32_t	sbx_notice_id(void);

#endif
