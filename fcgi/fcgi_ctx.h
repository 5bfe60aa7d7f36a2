/*
 * fcgi_ctx.h — private to fcgi/: the per-request context behind
 * http_io.ctx, shared by the worker loop (server.c) and the stream hub
 * (stream.c), which takes a request's connection over.
 */
#ifndef CDM_FCGI_CTX_H
#define CDM_FCGI_CTX_H

#include <stdbool.h>
#include <fcgiapp.h>

struct fcgi_ctx {
	FCGX_Request	*fr;
	bool		 detached;	/* the hub owns the connection now */
};

/* The stop eventfd of server.c, readable once shutdown has begun. */
int	fcgi_stop_fd(void);

#endif
