/*
 * http.h — the request and response object every handler sees. It hides
 * FastCGI behind a small I/O vtable so handlers can be driven from unit tests
 * with an in-memory transport. It knows nothing about conversations or users.
 */
#ifndef CDM_HTTP_H
#define CDM_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_object;

/* The transport under a request: FastCGI in production, memory in tests. */
struct http_io {
	int		(*write)(void *ctx, const char *buf, size_t len); /* 0 / -1 */
	int		(*flush)(void *ctx);				   /* 0 / -1 */
	const char	*(*param)(void *ctx, const char *name);	   /* CGI-style */
	void		*ctx;
	int		 peer_fd;	/* socket to the web server, -1 if none */
};

#define HTTP_PATH_MAX	2048

struct http_request {
	struct http_io	 io;
	const char	*method;		/* points at method_buf */
	char		 method_buf[16];
	char		 path[HTTP_PATH_MAX];	/* REQUEST_URI without the query */
	const char	*query;			/* after '?', or "" */
	char		*body;			/* NUL-terminated, or NULL */
	size_t		 body_len;

	/* Filled by the application for the access log. */
	char		 user_id[64];

	/* Response state. */
	int		 status;
	bool		 headers_sent;
	bool		 write_failed;
	int64_t		 started_us;	/* monotonic, for the access log */
};

/* Look up a CGI parameter ("HTTP_AUTHORIZATION", "CONTENT_TYPE", ...). */
const char *http_param(struct http_request *req, const char *name);

/*
 * Parse REQUEST_URI into path and query; a missing or over-long URI is an
 * error (-1). Routing uses REQUEST_URI because nginx, mod_proxy_fcgi and
 * mod_fcgid all agree on it, unlike SCRIPT_NAME and PATH_INFO.
 */
int	http_request_init(struct http_request *req, const struct http_io *io);

/*
 * Read the body (CONTENT_LENGTH bytes at most max). Returns 0, -1 on a read
 * error, or 413 when the body is larger than max; in that case up to a bounded
 * amount is drained so the web server sees a clean answer.
 */
int	http_read_body(struct http_request *req, size_t max,
	    int (*read)(void *ctx, char *buf, size_t len), void *ctx);

/* Start a response; extra is NULL or "Name: value\r\n" lines. */
int	http_send_headers(struct http_request *req, int status,
	    const char *content_type, const char *extra);
int	http_write(struct http_request *req, const char *buf, size_t len);
int	http_flush(struct http_request *req);

/* Complete responses. */
int	http_reply(struct http_request *req, int status,
	    const char *content_type, const char *extra, const char *body,
	    size_t len);
int	http_reply_json(struct http_request *req, int status,
	    struct json_object *obj);		/* takes ownership of obj */
int	http_reply_error(struct http_request *req, int status,
	    const char *code, const char *message);
int	http_reply_error_h(struct http_request *req, int status,
	    const char *code, const char *message, const char *extra);
int	http_reply_empty(struct http_request *req, int status);

const char *http_status_text(int status);

#endif
