/*
 * server.c — the FastCGI accept loop. A fixed number of threads wait in
 * FCGX_Accept_r (the thread-safe libfcgi API) and each serves one request at
 * a time; a request that becomes a long-lived event stream is handed to the
 * stream hub (stream.c), so streams never hold a worker. SIGTERM handling
 * lives in main: it calls fcgi_server_stop(), which wakes every acceptor by
 * shutting the listening socket down and every stream through an eventfd.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <fcgiapp.h>

#include "fcgi_ctx.h"
#include "http.h"
#include "log.h"
#include "server.h"
#include "stream.h"
#include "util.h"

/* Handlers use little stack; SQLite's deepest paths stay well inside this. */
#define THREAD_STACK	(256 * 1024)

struct fcgi_server {
	struct fcgi_server_opts	o;
	pthread_mutex_t		mu;
	pthread_cond_t		cv;
	int			threads;	/* live worker threads */
	int			inflight;	/* requests being handled */
};


static atomic_bool		 stopping;
static int			 stop_efd = -1;

int
fcgi_global_init(void)
{
	if (FCGX_Init() != 0)
		return -1;
	stop_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	return stop_efd == -1 ? -1 : 0;
}

bool
fcgi_fd0_is_listener(void)
{
	int		v = 0;
	socklen_t	len = sizeof(v);

	if (getsockopt(0, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) == -1)
		return false;
	return v != 0;
}

static int
listen_unix(const char *path, int mode, const char *group, char *err,
    size_t errlen)
{
	struct sockaddr_un	sun;
	struct stat		st;
	int			fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "socket path too long: %s", path);
		return -1;
	}
	strlcpy_(sun.sun_path, path, sizeof(sun.sun_path));
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		goto syserr;
	/* A leftover socket from a crash is replaced; a live one is not. */
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, errlen, "%s exists and is not a socket", path);
			close(fd);
			return -1;
		}
		if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0) {
			snprintf(err, errlen, "%s: another server is listening", path);
			close(fd);
			return -1;
		}
		unlink(path);
	}
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1)
		goto syserr;
	if (group != NULL && *group != '\0') {
		struct group *gr = getgrnam(group);

		if (gr == NULL) {
			snprintf(err, errlen, "socket group '%s' does not exist", group);
			close(fd);
			unlink(path);
			return -1;
		}
		if (chown(path, (uid_t)-1, gr->gr_gid) == -1)
			goto syserr;
	}
	if (chmod(path, (mode_t)mode) == -1)
		goto syserr;
	if (listen(fd, 1024) == -1)
		goto syserr;
	return fd;
syserr:
	snprintf(err, errlen, "%s: %s", path, strerror(errno));
	if (fd != -1)
		close(fd);
	return -1;
}

static int
listen_tcp(const char *spec, char *err, size_t errlen)
{
	struct addrinfo	 hints, *res = NULL;
	char		 host[256];
	const char	*colon = strrchr(spec, ':');
	int		 fd = -1, one = 1, rc;
	size_t		 hlen;

	if (colon == NULL || colon == spec || (hlen = (size_t)(colon - spec)) >= sizeof(host)) {
		snprintf(err, errlen, "listen '%s': expected unix:PATH or HOST:PORT", spec);
		return -1;
	}
	memcpy(host, spec, hlen);
	host[hlen] = '\0';
	/* [::1]:9000 */
	if (host[0] == '[' && host[hlen - 1] == ']') {
		memmove(host, host + 1, hlen - 2);
		host[hlen - 2] = '\0';
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	if ((rc = getaddrinfo(host, colon + 1, &hints, &res)) != 0) {
		snprintf(err, errlen, "listen '%s': %s", spec, gai_strerror(rc));
		return -1;
	}
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd == -1 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == -1 ||
	    bind(fd, res->ai_addr, res->ai_addrlen) == -1 ||
	    listen(fd, 1024) == -1) {
		snprintf(err, errlen, "listen '%s': %s", spec, strerror(errno));
		if (fd != -1)
			close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd;
}

int
fcgi_listen(const char *spec, int mode, const char *group, char *err,
    size_t errlen)
{
	if (strncmp(spec, "unix:", 5) == 0)
		return listen_unix(spec + 5, mode, group, err, errlen);
	return listen_tcp(spec, err, errlen);
}

/* ------------------------------------------------------------ transport */

static int
io_write(void *ctx, const char *buf, size_t len)
{
	struct fcgi_ctx *c = ctx;

	while (len > 0) {
		int chunk = len > (1 << 30) ? (1 << 30) : (int)len;
		if (FCGX_PutStr(buf, chunk, c->fr->out) != chunk)
			return -1;
		buf += chunk;
		len -= (size_t)chunk;
	}
	return 0;
}

static int
io_flush(void *ctx)
{
	struct fcgi_ctx *c = ctx;

	return FCGX_FFlush(c->fr->out) == 0 ? 0 : -1;
}

static const char *
io_param(void *ctx, const char *name)
{
	struct fcgi_ctx *c = ctx;

	return FCGX_GetParam(name, c->fr->envp);
}

static int
io_read(void *ctx, char *buf, size_t len)
{
	struct fcgi_ctx *c = ctx;
	int n = len > (1 << 20) ? (1 << 20) : (int)len;

	n = FCGX_GetStr(buf, n, c->fr->in);
	if (n == 0 && FCGX_GetError(c->fr->in) != 0)
		return -1;
	return n;
}

static void
handle_one(struct fcgi_server *s, struct fcgi_ctx *c)
{
	struct http_io		io = {
		.write = io_write, .flush = io_flush, .param = io_param,
		.ctx = c, .peer_fd = c->fr->ipcFd,
	};
	struct http_request	req;
	int			rc;

	if (http_request_init(&req, &io) == -1) {
		http_reply_error(&req, 400, "bad_request",
		    "The request URI is missing or too long.");
		goto out;
	}
	/*
	 * The body is read before the handler runs: every byte of stdin is
	 * consumed, so afterwards the socket becomes readable only when the web
	 * server goes away, which is how streams notice a vanished client.
	 */
	rc = http_read_body(&req, (size_t)s->o.max_body_bytes, io_read, c);
	if (rc == 413) {
		http_reply_error(&req, 413, "payload_too_large",
		    "The request body is larger than the server accepts.");
		goto out;
	}
	if (rc != 0) {
		http_reply_error(&req, 400, "bad_request",
		    "The request body could not be read.");
		goto out;
	}
	s->o.handler(&req);
	if (!req.headers_sent)
		http_reply_error(&req, 500, "internal", "The request had no answer.");
out:
	log_request(req.method ? req.method : "-", req.path[0] ? req.path : "-",
	    req.status, (double)(mono_us() - req.started_us) / 1000.0, req.user_id);
	free(req.body);
}

static void *
worker_main(void *arg)
{
	struct fcgi_server	*s = arg;
	FCGX_Request		 fr;
	struct fcgi_ctx		 c;

	if (FCGX_InitRequest(&fr, s->o.listen_fd, 0) != 0)
		goto exit;
	for (;;) {
		if (atomic_load(&stopping))
			break;
		if (FCGX_Accept_r(&fr) < 0)
			break;
		pthread_mutex_lock(&s->mu);
		s->inflight++;
		pthread_mutex_unlock(&s->mu);

		c.fr = &fr;
		c.detached = false;
		handle_one(s, &c);
		/* A detached request was let go by libfcgi already. */
		if (!c.detached)
			FCGX_Finish_r(&fr);

		pthread_mutex_lock(&s->mu);
		s->inflight--;
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->mu);
	}
	FCGX_Free(&fr, 1);
exit:
	pthread_mutex_lock(&s->mu);
	s->threads--;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* Called with s->mu held. */
static int
spawn_worker(struct fcgi_server *s)
{
	pthread_attr_t	attr;
	pthread_t	t;
	int		rc;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, THREAD_STACK);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&t, &attr, worker_main, s);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		log_error("%s: pthread_create: %s", __func__, strerror(rc));
		return -1;
	}
	s->threads++;
	return 0;
}

struct fcgi_server *
fcgi_server_start(const struct fcgi_server_opts *o)
{
	struct fcgi_server	*s = xcalloc(1, sizeof(*s));
	int			 i;

	s->o = *o;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	if (fcgi_stream_hub_start(o->max_streams) == -1) {
		log_error("cannot start the stream hub");
		free(s);
		return NULL;
	}
	pthread_mutex_lock(&s->mu);
	for (i = 0; i < o->workers; i++)
		if (spawn_worker(s) == -1)
			break;
	pthread_mutex_unlock(&s->mu);
	if (i == 0) {
		free(s);
		return NULL;
	}
	return s;
}

int
fcgi_stop_fd(void)
{
	return stop_efd;
}

int
fcgi_stopping(void)
{
	return atomic_load(&stopping);
}

int
fcgi_server_stop(struct fcgi_server *s, int grace_seconds)
{
	struct timespec	deadline;
	uint64_t	one = 1;
	int		left, alive;

	atomic_store(&stopping, true);
	FCGX_ShutdownPending();
	(void)!write(stop_efd, &one, sizeof(one));
	/* Wakes every thread blocked in accept(2) with EINVAL. */
	shutdown(s->o.listen_fd, SHUT_RDWR);

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += grace_seconds;
	pthread_mutex_lock(&s->mu);
	while (s->threads > 0) {
		if (pthread_cond_timedwait(&s->cv, &s->mu, &deadline) == ETIMEDOUT)
			break;
	}
	left = s->inflight;
	alive = s->threads;
	pthread_mutex_unlock(&s->mu);
	/* The hubs saw the stop eventfd too and end their streams cleanly. */
	fcgi_stream_hub_stop();
	if (left > 0)
		log_warn("shutdown: %d request(s) still running after %d s",
		    left, grace_seconds);
	/* Threads still running past the deadline keep s; the process ends. */
	if (alive == 0)
		free(s);
	return left;
}
