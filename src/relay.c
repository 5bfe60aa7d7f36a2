/*
 * relay.c — the FastCGI relay for Apache mod_fcgid. mod_fcgid sends one
 * request at a time to each process it spawns and kills them on timers, so
 * the process it spawns only joins each accepted connection to the resident
 * server's socket and pumps the bytes both ways, as they come, without
 * buffering a response or keeping anything between requests. It reads the
 * record framing only to end a response cleanly when the server vanishes,
 * and it starts the server (detached, one starter at a time) when nobody
 * answers. It never parses parameters and never looks at bodies.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <json-c/json.h>

#include "log.h"
#include "relay.h"
#include "util.h"

#define FCGI_END_REQUEST	3
#define FCGI_PARAMS		4
#define FCGI_STDIN		5
#define FCGI_STDOUT		6

/* One read's worth per direction: all the buffering there is. */
#define PUMP_BUF	16384
/* A request mod_fcgid has already sent in full is read within this. */
#define DRAIN_MS	30000
#define DRAIN_MAX	(64L * 1024 * 1024)
#define WRITE_MS	30000
#define POLL_STEP_MS	50

/* ------------------------------------------------------------ framing */

void
fcgi_track_bytes(struct fcgi_track *t, const unsigned char *buf, size_t n)
{
	size_t	k, clen;

	while (n > 0) {
		if (t->hlen < sizeof(t->hdr)) {
			k = sizeof(t->hdr) - t->hlen;
			if (k > n)
				k = n;
			memcpy(t->hdr + t->hlen, buf, k);
			t->hlen += k;
			buf += k;
			n -= k;
			if (t->hlen < sizeof(t->hdr))
				return;
			t->type = t->hdr[1];
			clen = (size_t)t->hdr[4] << 8 | t->hdr[5];
			t->left = clen + t->hdr[6];
			if (!t->have_id) {
				t->request_id = (uint16_t)(t->hdr[2] << 8 | t->hdr[3]);
				t->have_id = true;
			}
			if (t->type == FCGI_STDOUT && clen > 0)
				t->saw_stdout = true;
			else if (t->type == FCGI_END_REQUEST)
				t->saw_end = true;
			else if (t->type == FCGI_PARAMS && clen == 0)
				t->params_done = true;
			else if (t->type == FCGI_STDIN && clen == 0)
				t->stdin_done = true;
		}
		k = t->left < n ? t->left : n;
		t->left -= k;
		buf += k;
		n -= k;
		if (t->left == 0)
			t->hlen = 0;
	}
}

bool
fcgi_track_at_boundary(const struct fcgi_track *t)
{
	return t->hlen == 0 && t->left == 0;
}

static void
put_header(unsigned char *h, int type, uint16_t id, size_t clen, size_t pad)
{
	h[0] = 1;			/* FCGI_VERSION_1 */
	h[1] = (unsigned char)type;
	h[2] = (unsigned char)(id >> 8);
	h[3] = (unsigned char)id;
	h[4] = (unsigned char)(clen >> 8);
	h[5] = (unsigned char)clen;
	h[6] = (unsigned char)pad;
	h[7] = 0;
}

void
fcgi_end_records(uint16_t request_id, unsigned char out[24])
{
	memset(out, 0, 24);
	put_header(out, FCGI_STDOUT, request_id, 0, 0);
	/* appStatus 0, protocolStatus FCGI_REQUEST_COMPLETE (0). */
	put_header(out + 8, FCGI_END_REQUEST, request_id, 8, 0);
}

unsigned char *
fcgi_error_reply(uint16_t request_id, int status, const char *code,
    const char *message, size_t *len)
{
	struct json_object	*root, *err;
	const char		*body, *reason;
	unsigned char		*out;
	char			*text;
	size_t			 tlen, blen, pad;

	root = json_object_new_object();
	err = json_object_new_object();
	json_object_object_add(err, "code", json_object_new_string(code));
	json_object_object_add(err, "message", json_object_new_string(message));
	json_object_object_add(root, "error", err);
	body = json_object_to_json_string_length(root,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &blen);
	reason = status == 503 ? "Service Unavailable" :
	    status == 502 ? "Bad Gateway" : "Error";
	text = xasprintf("Status: %d %s\r\nContent-Type: application/json\r\n"
	    "Cache-Control: no-store\r\n\r\n%.*s", status, reason, (int)blen,
	    body);
	json_object_put(root);
	/* Our own short message: one record is plenty (limit 65535). */
	tlen = strlen(text);
	if (tlen > 60000)
		tlen = 60000;
	pad = (8 - tlen % 8) % 8;
	*len = 8 + tlen + pad + 24;
	out = xcalloc(1, *len);
	put_header(out, FCGI_STDOUT, request_id, tlen, pad);
	memcpy(out + 8, text, tlen);
	fcgi_end_records(request_id, out + 8 + tlen + pad);
	free(text);
	return out;
}

/* ------------------------------------------------------------ sockets */

static int
set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl == -1 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* A connected socket to the unix socket PATH, or -1 with errno set. */
static int
connect_unix(const char *path)
{
	struct sockaddr_un	sun;
	int			fd, e;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strlcpy_(sun.sun_path, path, sizeof(sun.sun_path));
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* Write all of BUF to a non-blocking FD within TIMEOUT_MS; 0 or -1. */
static int
write_full(int fd, const unsigned char *buf, size_t len, int timeout_ms)
{
	int64_t		deadline = mono_ms() + timeout_ms;
	struct pollfd	p = { .fd = fd, .events = POLLOUT };
	ssize_t		n;

	while (len > 0) {
		n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n > 0) {
			buf += n;
			len -= (size_t)n;
			continue;
		}
		if (n == -1 && errno != EAGAIN && errno != EINTR)
			return -1;
		if (mono_ms() >= deadline ||
		    poll(&p, 1, (int)(deadline - mono_ms())) == -1)
			return -1;
	}
	return 0;
}

/*
 * Read the request's records up to the end of its parameters and body, so
 * the web server has sent everything before the answer comes; bounded in
 * time and bytes. 0 with t filled, or -1.
 */
static int
drain_request(int fd, struct fcgi_track *t)
{
	unsigned char	buf[PUMP_BUF];
	int64_t		deadline = mono_ms() + DRAIN_MS;
	struct pollfd	p = { .fd = fd, .events = POLLIN };
	long		total = 0;
	ssize_t		n;

	while (!(t->params_done && t->stdin_done)) {
		if (total > DRAIN_MAX || mono_ms() >= deadline)
			return -1;
		if (poll(&p, 1, (int)(deadline - mono_ms())) == -1 &&
		    errno != EINTR)
			return -1;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n == 0)
			return -1;
		if (n == -1) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return -1;
		}
		total += n;
		fcgi_track_bytes(t, buf, (size_t)n);
	}
	return 0;
}

/* Answer the request on FD ourselves with a JSON error. */
static void
reply_error(int fd, struct fcgi_track *down, int status, const char *message)
{
	unsigned char	*out;
	size_t		 len;

	if (drain_request(fd, down) == -1 || !down->have_id)
		return;
	out = fcgi_error_reply(down->request_id, status, "unavailable",
	    message, &len);
	(void)write_full(fd, out, len, WRITE_MS);
	free(out);
}

/* ------------------------------------------------------------ starting */

/* 1 while PID exists and is not a zombie. */
static int
process_alive(pid_t pid)
{
	char	path[64], buf[512], *p;
	ssize_t	n;
	int	fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* "pid (comm) S ...": comm may hold anything, the state follows the last ')'. */
	if ((p = strrchr(buf, ')')) == NULL || p[1] != ' ')
		return 0;
	return p[2] != 'Z' && p[2] != 'X';
}

/*
 * Start the server detached from us: a double fork and setsid, so it is not
 * our child, has no controlling terminal and outlives this relay when
 * mod_fcgid kills it. Its stdin and stdout are /dev/null — above all it must
 * not inherit mod_fcgid's listening socket on fd 0, which it would serve on —
 * and its stderr stays ours (Apache's error log) for start-up failures.
 * Returns the server's pid, or -1.
 */
static pid_t
spawn_detached(const char *exe, char *const argv[])
{
	int		p[2], status, fd, sig;
	pid_t		child, server = -1;
	sigset_t	none;

	if (pipe2(p, O_CLOEXEC) == -1)
		return -1;
	if ((child = fork()) == -1) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (child == 0) {
		close(p[0]);
		(void)setsid();
		server = fork();
		if (server != 0) {
			(void)!write(p[1], &server, sizeof(server));
			_exit(0);
		}
		for (sig = 1; sig < NSIG; sig++)
			(void)signal(sig, SIG_DFL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if ((fd = open("/dev/null", O_RDWR)) == -1 ||
		    dup2(fd, 0) == -1 || dup2(fd, 1) == -1)
			_exit(127);
		if (chdir("/") == -1)
			_exit(127);
		for (fd = 3; fd < 1024; fd++)
			if (fd != p[1])
				(void)close(fd);
		execv(exe, argv);
		_exit(127);
	}
	close(p[1]);
	if (read(p[0], &server, sizeof(server)) != (ssize_t)sizeof(server))
		server = -1;
	close(p[0]);
	while (waitpid(child, &status, 0) == -1 && errno == EINTR)
		;
	return server;
}

/*
 * Connect to the server, starting it first if nobody answers. Under the lock
 * the socket is tried again, so of several relays racing only the first
 * starts a server and the others connect to it. A connected fd, or -1 with
 * the reason in why.
 */
static int
connect_or_start(const struct relay_opts *o, char *why, size_t whylen)
{
	int64_t	deadline;
	pid_t	pid = -1;
	int	fd, lock = -1, locked = 0;

	if ((fd = connect_unix(o->upstream)) != -1)
		return fd;
	if (errno != ENOENT && errno != ECONNREFUSED) {
		snprintf(why, whylen, "cannot connect to %s: %s", o->upstream,
		    strerror(errno));
		return -1;
	}
	if (o->start_argv == NULL) {
		snprintf(why, whylen, "nothing listens on %s", o->upstream);
		return -1;
	}
	lock = open(o->lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lock == -1) {
		snprintf(why, whylen, "cannot open the lock %s: %s",
		    o->lock_path, strerror(errno));
		return -1;
	}
	deadline = mono_ms() + o->start_timeout_ms;
	for (;;) {
		if (!locked && flock(lock, LOCK_EX | LOCK_NB) == 0) {
			locked = 1;
			/* Whoever held the lock may have started it already. */
			if ((fd = connect_unix(o->upstream)) != -1)
				break;
			log_info("relay: starting the server: %s", o->exe);
			if ((pid = spawn_detached(o->exe, o->start_argv)) == -1) {
				snprintf(why, whylen, "cannot start %s: %s",
				    o->exe, strerror(errno));
				break;
			}
		}
		if ((fd = connect_unix(o->upstream)) != -1)
			break;
		if (pid != -1 && !process_alive(pid)) {
			snprintf(why, whylen, "the server (pid %d) exited while "
			    "starting; its reasons are in this log above or in "
			    "its own log", (int)pid);
			break;
		}
		if (mono_ms() >= deadline) {
			snprintf(why, whylen, "the server did not open %s within "
			    "%d ms", o->upstream, o->start_timeout_ms);
			break;
		}
		usleep(POLL_STEP_MS * 1000);
	}
	close(lock);
	return fd;
}

/* ------------------------------------------------------------ pumping */

struct pipebuf {
	unsigned char	b[PUMP_BUF];
	size_t		off, len;
};

/* Write what BUF holds to FD without blocking: 0, or -1 on a dead peer. */
static int
flush_some(int fd, struct pipebuf *buf)
{
	ssize_t n;

	while (buf->len > 0) {
		n = send(fd, buf->b + buf->off, buf->len, MSG_NOSIGNAL);
		if (n == -1)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		buf->off += (size_t)n;
		buf->len -= (size_t)n;
	}
	buf->off = 0;
	return 0;
}

/* Read into an empty BUF: bytes read, 0 at EOF, -1 on error, -2 to retry. */
static ssize_t
fill(int fd, struct pipebuf *buf)
{
	ssize_t n = recv(fd, buf->b, sizeof(buf->b), 0);

	if (n == -1)
		return errno == EAGAIN || errno == EINTR ? -2 : -1;
	buf->off = 0;
	buf->len = (size_t)n;
	return n;
}

/*
 * The server went away without finishing the response. At a record
 * boundary the response can still be ended properly: the client gets the
 * end of its (chunked) body, as when the server stops, and reconnects with
 * Last-Event-ID. A server that had not answered at all gets a 503.
 */
static void
finish_abandoned(int client, struct fcgi_track *down, struct fcgi_track *up)
{
	unsigned char	end[24], *out;
	size_t		len;

	if (up->saw_end || !down->have_id || !fcgi_track_at_boundary(up))
		return;
	if (!up->saw_stdout) {
		out = fcgi_error_reply(down->request_id, 503, "unavailable",
		    "The server stopped before answering; try again.", &len);
		(void)write_full(client, out, len, WRITE_MS);
		free(out);
		return;
	}
	fcgi_end_records(down->request_id, end);
	(void)write_full(client, end, sizeof(end), WRITE_MS);
}

/*
 * Pump until either side closes. A buffer is refilled only once it has been
 * written out, so each direction holds at most one read and every record the
 * server flushes goes on at once.
 */
static void
pump(int client, int server)
{
	struct pipebuf		*to_srv = xmalloc(sizeof(*to_srv));
	struct pipebuf		*to_cli = xmalloc(sizeof(*to_cli));
	struct fcgi_track	 down, up;
	struct pollfd		 p[2];
	int			 server_eof = 0;
	ssize_t			 n;

	memset(&down, 0, sizeof(down));
	memset(&up, 0, sizeof(up));
	to_srv->len = to_cli->len = 0;
	for (;;) {
		p[0].fd = client;
		p[0].events = (to_srv->len == 0 ? POLLIN : 0) |
		    (to_cli->len > 0 ? POLLOUT : 0);
		p[1].fd = server;
		p[1].events = (to_cli->len == 0 && !server_eof ? POLLIN : 0) |
		    (to_srv->len > 0 ? POLLOUT : 0);
		/* A side with nothing to do is left out, or its hangup spins us. */
		if (server_eof || p[1].events == 0)
			p[1].fd = -1;
		if (p[0].events == 0)
			p[0].fd = -1;
		if (poll(p, 2, -1) == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		/* The web server hung up (its client went away, or it is done). */
		if (p[0].revents & (POLLERR | POLLHUP | POLLNVAL))
			break;
		if ((p[0].revents & POLLIN) && to_srv->len == 0) {
			if ((n = fill(client, to_srv)) == 0 || n == -1)
				break;
			if (n > 0)
				fcgi_track_bytes(&down, to_srv->b, (size_t)n);
		}
		if ((p[1].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    to_cli->len == 0 && !server_eof) {
			n = fill(server, to_cli);
			if (n == 0 || n == -1)
				server_eof = 1;
			else if (n > 0)
				fcgi_track_bytes(&up, to_cli->b, (size_t)n);
		}
		if (to_srv->len > 0 && !server_eof &&
		    flush_some(server, to_srv) == -1)
			server_eof = 1;
		if (to_cli->len > 0 && flush_some(client, to_cli) == -1)
			break;
		if (server_eof && to_cli->len == 0) {
			finish_abandoned(client, &down, &up);
			break;
		}
	}
	free(to_srv);
	free(to_cli);
}

void
relay_connection(const struct relay_opts *o, int client)
{
	struct fcgi_track	down;
	char			why[512];
	int			server;

	if (set_nonblock(client) == -1)
		return;
	if ((server = connect_or_start(o, why, sizeof(why))) == -1) {
		log_error("relay: %s", why);
		memset(&down, 0, sizeof(down));
		reply_error(client, &down, 503,
		    "The server is not available; try again later.");
		return;
	}
	if (set_nonblock(server) == 0)
		pump(client, server);
	close(server);
}

int
relay_serve(const struct relay_opts *o)
{
	int fd;

	for (;;) {
		fd = accept4(o->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd == -1) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			log_error("relay: accept: %s", strerror(errno));
			return -1;
		}
		relay_connection(o, fd);
		close(fd);
	}
}
