/*
 * server.h — the FastCGI front: listening socket, a pool of accepting worker
 * threads using libfcgi's thread-safe _r API, long-lived streams, and graceful
 * shutdown. It hands each request to one handler function and knows nothing
 * about what the request means.
 */
#ifndef CDM_SERVER_H
#define CDM_SERVER_H

#include <stdbool.h>

struct http_request;
struct fcgi_server;

typedef void (*fcgi_handler_fn)(struct http_request *req);

struct fcgi_server_opts {
	int		 listen_fd;
	int		 workers;		/* accepting threads kept ready */
	int		 max_streams;		/* long-lived streams at most */
	long		 max_body_bytes;
	fcgi_handler_fn	 handler;
};

/*
 * Open the listening socket for "unix:PATH" (mode and group applied, a stale
 * socket file replaced) or "HOST:PORT". -1 with a message in err.
 */
int	fcgi_listen(const char *spec, int mode, const char *group, char *err,
	    size_t errlen);
/* 1 when fd 0 is a listening socket (spawn-fcgi, systemd, mod_fcgid). */
bool	fcgi_fd0_is_listener(void);

/* libfcgi's global initialisation; call before any thread exists. */
int	fcgi_global_init(void);

struct fcgi_server *fcgi_server_start(const struct fcgi_server_opts *o);
/*
 * Stop accepting, tell streams to end, wait up to grace_seconds for
 * in-flight requests, then free. Returns the number of requests abandoned.
 */
int	fcgi_server_stop(struct fcgi_server *s, int grace_seconds);

/* Becomes readable when the server is stopping. */
int	fcgi_stop_fd(void);
int	fcgi_stopping(void);

#endif
