/*
 * api_events.c — GET /api/conversations/{id}/events: the Server-Sent Events
 * stream. The worker replays the log after the client's last id, then hands
 * the connection to the stream hub (fcgi/stream.c), which follows the live
 * bus from a hub thread. Ids only ever increase on a stream, so a reconnect
 * with Last-Event-ID loses nothing and repeats nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "app.h"
#include "bus.h"
#include "conversations.h"
#include "db.h"
#include "events.h"
#include "http.h"
#include "log.h"
#include "sse.h"
#include "stream.h"

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

/* A stream in the hub: its subscription and the last id it was sent. */
struct event_stream {
	struct bus_sub	*sub;
	char		 conv_id[ID_BUFSZ];
	int64_t		 last;
};

static int
hub_replay_collect(void *arg, int64_t id, const char *type, const char *data)
{
	void			**a = arg;
	struct fcgi_stream	 *s = a[0];
	struct event_stream	 *es = a[1];
	char			 *frame;
	size_t			  len;
	int			  rc;

	if (sse_format_event(id, type, data, &frame, &len) == -1)
		return -1;
	rc = fcgi_stream_write(s, frame, len);
	free(frame);
	if (rc == 0)
		es->last = id;
	return rc;
}

/*
 * The hub calls this when the subscription's eventfd fires: queue the new
 * frames. Runs on a hub thread, so it never blocks on the client.
 */
static int
event_stream_ready(void *ctx, struct fcgi_stream *s)
{
	struct event_stream	*es = ctx;
	struct bus_frame	*frames[TAKE_MAX];
	enum bus_take_result	 r;
	size_t			 n, i;
	int			 rc = 0;

	r = bus_take(es->sub, es->last, frames, TAKE_MAX, &n);
	if (r == BUS_CLOSED)
		return 1;
	if (r == BUS_BEHIND) {
		void	*a[2] = { s, es };
		int	 got;

		/* Fell behind the ring: the log has everything, in order. */
		do {
			got = events_replay(es->conv_id, es->last, REPLAY_BATCH,
			    hub_replay_collect, a);
		} while (got == REPLAY_BATCH);
		db_release();
		return got < 0 ? -1 : 0;
	}
	for (i = 0; i < n; i++) {
		if (rc == 0 && fcgi_stream_write(s, frames[i]->data,
		    frames[i]->len) == 0)
			es->last = frames[i]->id;
		else
			rc = -1;
		bus_frame_put(frames[i]);
	}
	return rc;
}

static void
event_stream_done(void *ctx)
{
	struct event_stream *es = ctx;

	bus_unsubscribe(es->sub);
	free(es);
}

static const struct stream_ops event_stream_ops = {
	.ready = event_stream_ready,
	.done = event_stream_done,
};

void
api_events(struct http_request *req, const struct route_params *p, void *c)
{
	struct api_ctx		*ctx = c;
	struct conversation	 conv;
	struct bus_sub		*sub;
	struct event_stream	*es;
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
	if (fcgi_stream_reserve() == -1) {
		http_reply_error_h(req, 503, "unavailable",
		    "Too many open event streams; try again later.",
		    "Retry-After: 5\r\n");
		return;
	}
	/* Subscribe before replaying: nothing published meanwhile is missed. */
	if ((sub = bus_subscribe(conv.id)) == NULL) {
		fcgi_stream_unreserve();
		api_fail(req);
		return;
	}
	/* The backlog goes out from this worker; the hub follows the bus. */
	if (sse_begin(req) == -1 || replay(req, conv.id, &last) == -1) {
		fcgi_stream_unreserve();
		bus_unsubscribe(sub);
		return;
	}
	es = xcalloc(1, sizeof(*es));
	es->sub = sub;
	strlcpy_(es->conv_id, conv.id, sizeof(es->conv_id));
	es->last = last;
	if (fcgi_stream_detach(req, bus_fd(sub), &event_stream_ops, es,
	    app.cfg.server.heartbeat_seconds * 1000) == -1) {
		log_error("%s: could not hand the stream to the hub", __func__);
		event_stream_done(es);
	}
}
