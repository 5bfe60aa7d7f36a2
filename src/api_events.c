/*
 * api_events.c — GET /api/conversations/{id}/events: the Server-Sent Events
 * stream. It replays the log after the client's last id, then follows the
 * live bus; ids only ever increase on a stream, so a reconnect with
 * Last-Event-ID loses nothing and repeats nothing. The thread waits in
 * poll(2) on three things: new frames, the web server closing the
 * connection (the client left) and the server stopping.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "api.h"
#include "app.h"
#include "bus.h"
#include "conversations.h"
#include "db.h"
#include "events.h"
#include "http.h"
#include "log.h"
#include "server.h"
#include "sse.h"

#define REPLAY_BATCH	256
#define TAKE_MAX	64

struct replay_buf {
	char	*buf;
	size_t	 len, cap;
	int64_t	 last;
};

static int
replay_collect(void *arg, int64_t id, const char *type, const char *data)
{
	struct replay_buf	*rb = arg;
	char			*frame;
	size_t			 len;

	if (sse_format_event(id, type, data, &frame, &len) == -1)
		return -1;
	if (rb->len + len > rb->cap) {
		rb->cap = (rb->len + len) * 2;
		rb->buf = xrealloc(rb->buf, rb->cap);
	}
	memcpy(rb->buf + rb->len, frame, len);
	rb->len += len;
	rb->last = id;
	free(frame);
	return 0;
}

/*
 * Send every logged event after *last. Events are gathered a batch at a time
 * and written after the read transaction ends, so a slow client never holds
 * the database open. 0, or -1 when the client is gone or the database failed.
 */
static int
replay(struct http_request *req, const char *conv_id, int64_t *last)
{
	struct replay_buf	rb = { .last = *last };
	int			n, rc = 0;

	do {
		rb.len = 0;
		n = events_replay(conv_id, rb.last, REPLAY_BATCH, replay_collect, &rb);
		if (n == -1) {
			rc = -1;
			break;
		}
		if (rb.len > 0 && sse_send(req, rb.buf, rb.len) == -1) {
			rc = -1;
			break;
		}
		*last = rb.last;
	} while (n == REPLAY_BATCH);
	free(rb.buf);
	/* A stream can live for hours; give its connection back meanwhile. */
	db_release();
	return rc;
}

/* 1 when the web server closed its end (the client went away). */
static int
peer_gone(int fd)
{
	char	c;
	ssize_t	n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);

	if (n == 0)
		return 1;
	if (n < 0)
		return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
	/* Bytes after the request's end mean an abort record: treat as gone. */
	return 1;
}

static void
follow(struct http_request *req, struct bus_sub *sub, const char *conv_id,
    int64_t last)
{
	struct pollfd		 pfd[3];
	struct bus_frame	*frames[TAKE_MAX];
	int			 heartbeat_ms = app.cfg.server.heartbeat_seconds * 1000;
	int64_t			 next_ping = mono_ms() + heartbeat_ms;
	size_t			 n, i;

	for (;;) {
		int timeout = (int)(next_ping - mono_ms());

		if (timeout < 0)
			timeout = 0;
		pfd[0] = (struct pollfd){ .fd = bus_fd(sub), .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = fcgi_stop_fd(), .events = POLLIN };
		pfd[2] = (struct pollfd){ .fd = req->io.peer_fd,
		    .events = POLLIN | POLLRDHUP };
		if (poll(pfd, req->io.peer_fd >= 0 ? 3 : 2, timeout) == -1) {
			if (errno == EINTR)
				continue;
			log_error("%s: poll: %s", __func__, strerror(errno));
			return;
		}
		if (pfd[1].revents || fcgi_stopping())
			return;
		if (req->io.peer_fd >= 0 && pfd[2].revents &&
		    peer_gone(req->io.peer_fd))
			return;
		if (pfd[0].revents) {
			enum bus_take_result r;

			r = bus_take(sub, last, frames, TAKE_MAX, &n);
			if (r == BUS_CLOSED)
				return;
			if (r == BUS_BEHIND) {
				if (replay(req, conv_id, &last) == -1)
					return;
				next_ping = mono_ms() + heartbeat_ms;
				continue;
			}
			for (i = 0; i < n; i++) {
				int rc = sse_send(req, frames[i]->data, frames[i]->len);

				last = frames[i]->id;
				bus_frame_put(frames[i]);
				if (rc == -1) {
					while (++i < n)
						bus_frame_put(frames[i]);
					return;
				}
			}
			if (n > 0)
				next_ping = mono_ms() + heartbeat_ms;
			continue;
		}
		if (mono_ms() >= next_ping) {
			if (sse_comment(req, "ping") == -1)
				return;
			next_ping = mono_ms() + heartbeat_ms;
		}
	}
}

void
api_events(struct http_request *req, const struct route_params *p, void *c)
{
	struct api_ctx		*ctx = c;
	struct conversation	 conv;
	struct bus_sub		*sub;
	const char		*hdr = http_param(req, "HTTP_LAST_EVENT_ID");
	int64_t			 last;
	char			 after[32] = "";
	int			 rc;

	if (!id_is_valid(p->v[0])) {
		api_not_found(req);
		return;
	}
	if ((rc = conv_get_for_user(p->v[0], ctx->user.id, &conv)) != 0) {
		if (rc == 1)
			api_not_found(req);
		else
			api_fail(req);
		return;
	}
	/* ?after=N is for clients that cannot set headers (EventSource). */
	if (hdr == NULL || *hdr == '\0') {
		const char *q = req->query, *a;

		for (a = q; (a = strstr(a, "after=")) != NULL; a++)
			if (a == q || a[-1] == '&') {
				strlcpy_(after, a + 6, sizeof(after));
				after[strcspn(after, "&")] = '\0';
				hdr = after;
				break;
			}
	}
	if ((last = sse_parse_last_id(hdr)) < 0) {
		http_reply_error(req, 400, "bad_request",
		    "Last-Event-ID (or after) must be a non-negative integer.");
		return;
	}
	if (fcgi_stream_begin(req) == -1) {
		http_reply_error_h(req, 503, "unavailable",
		    "Too many open event streams; try again later.",
		    "Retry-After: 5\r\n");
		return;
	}
	/* Subscribe before replaying: nothing published meanwhile is missed. */
	if ((sub = bus_subscribe(conv.id)) == NULL) {
		api_fail(req);
		return;
	}
	if (sse_begin(req) == 0 && replay(req, conv.id, &last) == 0)
		follow(req, sub, conv.id, last);
	bus_unsubscribe(sub);
}
