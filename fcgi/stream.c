/*
 * stream.c — the stream hub. A detached stream is a FastCGI connection plus a
 * source descriptor (for events, the bus's eventfd). HUB_THREADS epoll threads
 * own all of them: they call the owner's ready() when the source fires, frame
 * what it queued as FCGI_STDOUT records, write without blocking, send
 * heartbeats, and end the request with FCGI_END_REQUEST. It does not know
 * what the bytes mean, and it never reads the request: its body was consumed
 * before detaching, so a readable socket means the web server went away.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fcgi_ctx.h"
#include "http.h"
#include "log.h"
#include "stream.h"
#include "util.h"

/* Two cores: two hub threads keep both busy without contending much. */
#define HUB_THREADS	2
/* A client this far behind is dropped; it reconnects with Last-Event-ID. */
#define OUT_MAX		(4u * 1024 * 1024)
#define RECORD_MAX	32768	/* content bytes per FCGI_STDOUT record */
#define SCAN_MS		500	/* heartbeat resolution */

#define FCGI_VERSION_1		1
#define FCGI_END_REQUEST	3
#define FCGI_STDOUT		6

enum handle_kind { H_CONN, H_SOURCE, H_STOP };

struct handle {
	enum handle_kind	 kind;
	struct fcgi_stream	*s;
};

struct hub {
	pthread_t		 thread;
	int			 ep;
	pthread_mutex_t		 mu;		/* guards the list */
	struct fcgi_stream	*head;
	struct handle		 stop;
};

struct fcgi_stream {
	struct hub		*hub;
	struct fcgi_stream	*prev, *next;
	int			 fd;
	int			 source_fd;
	unsigned		 req_id;
	const struct stream_ops	*ops;
	void			*ctx;
	int			 heartbeat_ms;
	int64_t			 next_ping;
	char			*out;
	size_t			 out_off, out_len, out_cap;
	bool			 want_out;
	struct handle		 h_conn, h_source;
};

static struct hub	hubs[HUB_THREADS];
static int		nhubs;
static atomic_uint	next_hub;
static pthread_mutex_t	count_mu = PTHREAD_MUTEX_INITIALIZER;
static int		nstreams, nreserved, max_streams;

int
fcgi_stream_reserve(void)
{
	int rc = -1;

	pthread_mutex_lock(&count_mu);
	if (nhubs > 0 && nstreams + nreserved < max_streams) {
		nreserved++;
		rc = 0;
	}
	pthread_mutex_unlock(&count_mu);
	return rc;
}

void
fcgi_stream_unreserve(void)
{
	pthread_mutex_lock(&count_mu);
	nreserved--;
	pthread_mutex_unlock(&count_mu);
}

int
fcgi_stream_count(void)
{
	int n;

	pthread_mutex_lock(&count_mu);
	n = nstreams;
	pthread_mutex_unlock(&count_mu);
	return n;
}

/* Append one record header and its content to the output buffer. */
static void
append_record(struct fcgi_stream *s, int type, const char *buf, size_t len)
{
	unsigned char	hdr[8];
	size_t		need = s->out_len + sizeof(hdr) + len;

	if (need > s->out_cap) {
		/* Compact first: the written prefix is dead. */
		if (s->out_off > 0) {
			memmove(s->out, s->out + s->out_off, s->out_len - s->out_off);
			s->out_len -= s->out_off;
			s->out_off = 0;
			need = s->out_len + sizeof(hdr) + len;
		}
		if (need > s->out_cap) {
			s->out_cap = need * 2 < 4096 ? 4096 : need * 2;
			s->out = xrealloc(s->out, s->out_cap);
		}
	}
	hdr[0] = FCGI_VERSION_1;
	hdr[1] = (unsigned char)type;
	hdr[2] = (unsigned char)(s->req_id >> 8);
	hdr[3] = (unsigned char)s->req_id;
	hdr[4] = (unsigned char)(len >> 8);
	hdr[5] = (unsigned char)len;
	hdr[6] = 0;	/* no padding */
	hdr[7] = 0;
	memcpy(s->out + s->out_len, hdr, sizeof(hdr));
	if (len > 0)
		memcpy(s->out + s->out_len + sizeof(hdr), buf, len);
	s->out_len += sizeof(hdr) + len;
}

int
fcgi_stream_write(struct fcgi_stream *s, const char *buf, size_t len)
{
	if (s->out_len - s->out_off + len > OUT_MAX)
		return -1;
	while (len > 0) {
		size_t n = len > RECORD_MAX ? RECORD_MAX : len;

		append_record(s, FCGI_STDOUT, buf, n);
		buf += n;
		len -= n;
	}
	s->next_ping = mono_ms() + s->heartbeat_ms;
	return 0;
}

static void
set_want_out(struct fcgi_stream *s, bool want)
{
	struct epoll_event ev = { .data.ptr = &s->h_conn };

	if (s->want_out == want)
		return;
	ev.events = EPOLLIN | EPOLLRDHUP | (want ? EPOLLOUT : 0);
	if (epoll_ctl(s->hub->ep, EPOLL_CTL_MOD, s->fd, &ev) == 0)
		s->want_out = want;
}

/* Write what is queued without blocking. 0, or -1 when the peer is gone. */
static int
flush_out(struct fcgi_stream *s)
{
	while (s->out_off < s->out_len) {
		ssize_t n = write(s->fd, s->out + s->out_off,
		    s->out_len - s->out_off);

		if (n > 0) {
			s->out_off += (size_t)n;
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			set_want_out(s, true);
			return 0;
		}
		return -1;
	}
	s->out_off = s->out_len = 0;
	set_want_out(s, false);
	return 0;
}

/*
 * End a stream. clean: finish the FastCGI request properly (empty STDOUT,
 * END_REQUEST) so the client sees a complete response and reconnects.
 */
static void
stream_end(struct fcgi_stream *s, bool clean)
{
	struct hub *h = s->hub;

	if (clean) {
		unsigned char body[8] = { 0, 0, 0, 0, 0 /* REQUEST_COMPLETE */ };

		append_record(s, FCGI_STDOUT, NULL, 0);
		append_record(s, FCGI_END_REQUEST, (const char *)body, sizeof(body));
		(void)flush_out(s);
	}
	epoll_ctl(h->ep, EPOLL_CTL_DEL, s->fd, NULL);
	epoll_ctl(h->ep, EPOLL_CTL_DEL, s->source_fd, NULL);
	pthread_mutex_lock(&h->mu);
	if (s->prev)
		s->prev->next = s->next;
	else
		h->head = s->next;
	if (s->next)
		s->next->prev = s->prev;
	pthread_mutex_unlock(&h->mu);
	close(s->fd);
	s->ops->done(s->ctx);
	free(s->out);
	free(s);
	pthread_mutex_lock(&count_mu);
	nstreams--;
	pthread_mutex_unlock(&count_mu);
}

/* The web server's end became readable: it closed (the client left). */
static int
peer_gone(int fd)
{
	char	c;
	ssize_t	n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);

	if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return 0;
	/* EOF, an error, or an FCGI_ABORT_REQUEST record: the stream is over. */
	return 1;
}

static void
heartbeats(struct hub *h, int64_t now)
{
	struct fcgi_stream *s, *next;

	pthread_mutex_lock(&h->mu);
	s = h->head;
	pthread_mutex_unlock(&h->mu);
	/* Only this thread removes streams, so walking without the lock is safe
	 * as long as each next pointer is read under it. */
	for (; s != NULL; s = next) {
		int rc = 0;

		if (now >= s->next_ping) {
			static const char ping[] = ": ping\n\n";

			rc = fcgi_stream_write(s, ping, sizeof(ping) - 1);
			if (rc == 0)
				rc = flush_out(s);
		}
		pthread_mutex_lock(&h->mu);
		next = s->next;
		pthread_mutex_unlock(&h->mu);
		if (rc == -1)
			stream_end(s, false);
	}
}

static void
end_all(struct hub *h)
{
	for (;;) {
		struct fcgi_stream *s;

		pthread_mutex_lock(&h->mu);
		s = h->head;
		pthread_mutex_unlock(&h->mu);
		if (s == NULL)
			break;
		stream_end(s, true);
	}
}

static void *
hub_main(void *arg)
{
	struct hub		*h = arg;
	struct epoll_event	 evs[64];
	int64_t			 next_scan = mono_ms() + SCAN_MS;
	int			 n, i;

	for (;;) {
		int64_t now = mono_ms();
		int timeout = next_scan > now ? (int)(next_scan - now) : 0;

		n = epoll_wait(h->ep, evs, 64, timeout);
		if (n == -1 && errno != EINTR) {
			log_error("%s: epoll_wait: %s", __func__, strerror(errno));
			break;
		}
		for (i = 0; i < n; i++) {
			struct handle		*hd = evs[i].data.ptr;
			struct fcgi_stream	*s;
			int			 rc = 0;

			if (hd == NULL)		/* its stream ended above */
				continue;
			s = hd->s;
			if (hd->kind == H_STOP) {
				end_all(h);
				return NULL;
			}
			if (hd->kind == H_CONN) {
				if ((evs[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP |
				    EPOLLERR)) && peer_gone(s->fd))
					rc = -1;
				else if (evs[i].events & EPOLLOUT)
					rc = flush_out(s);
			} else {
				rc = s->ops->ready(s->ctx, s);
				if (rc == 0)
					rc = flush_out(s);
			}
			if (rc != 0) {
				stream_end(s, rc == 1);
				/* The other handle of s may be later in evs. */
				for (int j = i + 1; j < n; j++) {
					struct handle *o = evs[j].data.ptr;

					if (o != NULL && o->kind != H_STOP && o->s == s)
						evs[j].data.ptr = NULL;
				}
			}
		}
		now = mono_ms();
		if (now >= next_scan) {
			heartbeats(h, now);
			next_scan = now + SCAN_MS;
		}
	}
	end_all(h);
	return NULL;
}

int
fcgi_stream_detach(struct http_request *req, int source_fd,
    const struct stream_ops *ops, void *ctx, int heartbeat_ms)
{
	struct fcgi_ctx		*c = req->io.ctx;
	struct fcgi_stream	*s;
	struct hub		*h;
	struct epoll_event	 ev;
	int			 fd;

	if (nhubs == 0 || c == NULL || c->fr == NULL || c->detached ||
	    FCGX_FFlush(c->fr->out) != 0)
		goto fail;
	if ((fd = fcntl(c->fr->ipcFd, F_DUPFD_CLOEXEC, 3)) == -1)
		goto fail;
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == -1) {
		close(fd);
		goto fail;
	}
	s = xcalloc(1, sizeof(*s));
	s->fd = fd;
	s->source_fd = source_fd;
	s->req_id = (unsigned)c->fr->requestId;
	s->ops = ops;
	s->ctx = ctx;
	s->heartbeat_ms = heartbeat_ms;
	s->next_ping = mono_ms() + heartbeat_ms;
	s->h_conn = (struct handle){ H_CONN, s };
	s->h_source = (struct handle){ H_SOURCE, s };

	/*
	 * libfcgi lets go of the connection without ending the request:
	 * detached, its close does not shut the socket down, and freeing
	 * the streams writes nothing. Our duplicate keeps the socket open.
	 */
	FCGX_Detach(c->fr);
	FCGX_Free(c->fr, 1);
	c->detached = true;
	req->write_failed = true;	/* nothing more through libfcgi */

	h = &hubs[atomic_fetch_add(&next_hub, 1) % (unsigned)nhubs];
	s->hub = h;
	pthread_mutex_lock(&count_mu);
	nreserved--;
	nstreams++;
	pthread_mutex_unlock(&count_mu);
	pthread_mutex_lock(&h->mu);
	s->next = h->head;
	if (h->head)
		h->head->prev = s;
	h->head = s;
	pthread_mutex_unlock(&h->mu);

	/* Registered last: the hub may act on s from here on. */
	ev = (struct epoll_event){ .events = EPOLLIN | EPOLLRDHUP,
	    .data.ptr = &s->h_conn };
	epoll_ctl(h->ep, EPOLL_CTL_ADD, fd, &ev);
	ev = (struct epoll_event){ .events = EPOLLIN, .data.ptr = &s->h_source };
	epoll_ctl(h->ep, EPOLL_CTL_ADD, source_fd, &ev);
	return 0;
fail:
	fcgi_stream_unreserve();
	return -1;
}

int
fcgi_stream_hub_start(int max)
{
	int i;

	max_streams = max;
	for (i = 0; i < HUB_THREADS; i++) {
		struct hub		*h = &hubs[i];
		struct epoll_event	 ev;

		memset(h, 0, sizeof(*h));
		pthread_mutex_init(&h->mu, NULL);
		h->stop = (struct handle){ H_STOP, NULL };
		if ((h->ep = epoll_create1(EPOLL_CLOEXEC)) == -1)
			return -1;
		ev = (struct epoll_event){ .events = EPOLLIN, .data.ptr = &h->stop };
		if (epoll_ctl(h->ep, EPOLL_CTL_ADD, fcgi_stop_fd(), &ev) == -1 ||
		    pthread_create(&h->thread, NULL, hub_main, h) != 0) {
			close(h->ep);
			return -1;
		}
		nhubs = i + 1;
	}
	return 0;
}

void
fcgi_stream_hub_stop(void)
{
	int i;

	/* The stop eventfd is already readable: each hub ends its streams. */
	for (i = 0; i < nhubs; i++) {
		pthread_join(hubs[i].thread, NULL);
		close(hubs[i].ep);
	}
	nhubs = 0;
}
