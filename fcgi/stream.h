/*
 * stream.h — long-lived responses (event streams) detached from the worker
 * threads. Once a handler has sent its headers and any backlog, it hands the
 * FastCGI connection to the stream hub: a couple of epoll threads that write
 * FCGI_STDOUT records themselves, send heartbeats, and notice a vanished
 * client. Thousands of streams then cost no thread each. The hub knows
 * nothing about what the bytes mean; its owner supplies them through ops.
 */
#ifndef CDM_STREAM_H
#define CDM_STREAM_H

#include <stddef.h>

struct http_request;
struct fcgi_stream;

struct stream_ops {
	/*
	 * source_fd is readable: queue what is new with fcgi_stream_write().
	 * Return 0 to go on, 1 to end the stream cleanly, -1 to drop it.
	 */
	int	(*ready)(void *ctx, struct fcgi_stream *s);
	/* The stream is over (any reason): release ctx. */
	void	(*done)(void *ctx);
};

/*
 * Reserve a place for one more stream before answering; -1 when
 * server.max_streams are open (answer 503). Every successful reserve is
 * followed by exactly one fcgi_stream_detach() or fcgi_stream_unreserve().
 */
int	fcgi_stream_reserve(void);
void	fcgi_stream_unreserve(void);

/*
 * Move the request's connection into the hub (its headers already sent and
 * flushed). source_fd is polled for readability; ": ping" is written after
 * heartbeat_ms without output. After 0 the request object must not be
 * written to again; on -1 the reservation is released, the stream was not
 * taken, and ops->done has NOT been called.
 */
int	fcgi_stream_detach(struct http_request *req, int source_fd,
	    const struct stream_ops *ops, void *ctx, int heartbeat_ms);

/* Queue bytes of the response body; -1 when the stream is too far behind. */
int	fcgi_stream_write(struct fcgi_stream *s, const char *buf, size_t len);

/* Start and stop the hub threads (stop ends every stream cleanly). */
int	fcgi_stream_hub_start(int max_streams);
void	fcgi_stream_hub_stop(void);
int	fcgi_stream_count(void);

#endif
