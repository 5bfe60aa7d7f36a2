/*
 * sse.h — Server-Sent Events framing (the WHATWG event-stream format). Frames
 * are formatted once into a buffer and may be written to many streams. It
 * does not decide what an event means; src/events.c does.
 */
#ifndef CDM_SSE_H
#define CDM_SSE_H

#include <stddef.h>
#include <stdint.h>

struct http_request;

/*
 * Format "id: N\nevent: TYPE\ndata: DATA\n\n" into a new buffer (*out, *outlen).
 * DATA with line breaks becomes several data: lines, so a frame can never be
 * split by its own payload; TYPE must be one line (-1 otherwise).
 */
int	sse_format_event(int64_t id, const char *type, const char *data,
	    char **out, size_t *outlen);

/* The response headers of an event stream (status 200). */
int	sse_begin(struct http_request *req);
/* Write a pre-formatted frame and flush it. */
int	sse_send(struct http_request *req, const char *frame, size_t len);
/* ": TEXT\n\n", flushed: the heartbeat. */
int	sse_comment(struct http_request *req, const char *text);

/*
 * Parse a Last-Event-ID header or ?after= value: a non-negative integer.
 * Returns the id, 0 for NULL or empty, -1 for anything else.
 */
int64_t	sse_parse_last_id(const char *s);

#endif
