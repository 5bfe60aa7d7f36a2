/*
 * http.c — request parsing and response writing over struct http_io. The
 * FastCGI specifics (libfcgi streams) live in server.c; this file only sees
 * parameters, bytes in and bytes out, so handlers can be unit-tested.
 */
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>

#include "http.h"
#include "util.h"

/* A body larger than the cap is drained up to this much before answering 413. */
#define DRAIN_MAX	(16L * 1024 * 1024)

const char *
http_param(struct http_request *req, const char *name)
{
	return req->io.param ? req->io.param(req->io.ctx, name) : NULL;
}

int
http_request_init(struct http_request *req, const struct http_io *io)
{
	const char	*uri, *q;
	size_t		 len;

	memset(req, 0, sizeof(*req));
	req->io = *io;
	req->started_us = mono_us();
	/*
	 * Copied: the parameters belong to libfcgi and are freed when a
	 * stream is handed to the hub, but the access log still needs it.
	 */
	strlcpy_(req->method_buf, http_param(req, "REQUEST_METHOD") ?
	    http_param(req, "REQUEST_METHOD") : "GET", sizeof(req->method_buf));
	req->method = req->method_buf;
	uri = http_param(req, "REQUEST_URI");
	if (uri == NULL || uri[0] != '/')
		return -1;
	q = strchr(uri, '?');
	len = q ? (size_t)(q - uri) : strlen(uri);
	if (len >= sizeof(req->path))
		return -1;
	memcpy(req->path, uri, len);
	req->path[len] = '\0';
	req->query = q ? q + 1 : "";
	return 0;
}

int
http_read_body(struct http_request *req, size_t max,
    int (*read)(void *ctx, char *buf, size_t len), void *ctx)
{
	const char	*cl = http_param(req, "CONTENT_LENGTH");
	long long	 want = -1;
	size_t		 cap, got = 0;
	char		*buf;
	int		 n;

	if (cl != NULL && *cl != '\0') {
		want = parse_uint(cl, (long long)1 << 40);
		if (want < 0)
			return -1;
		if ((size_t)want > max) {
			char	sink[8192];
			long	drained = 0;

			while (drained < DRAIN_MAX &&
			    (n = read(ctx, sink, sizeof(sink))) > 0)
				drained += n;
			return 413;
		}
	}
	cap = want >= 0 ? (size_t)want : 4096;
	if (cap > max)
		cap = max;
	buf = xmalloc(cap + 1);
	for (;;) {
		if (got == cap) {
			if (want >= 0 || cap >= max) {
				/* Without a length: one byte more tells "too big". */
				char extra;
				if (want < 0 && read(ctx, &extra, 1) > 0) {
					free(buf);
					return 413;
				}
				break;
			}
			cap = cap * 2 > max ? max : cap * 2;
			buf = xrealloc(buf, cap + 1);
		}
		n = read(ctx, buf + got, cap - got);
		if (n < 0) {
			free(buf);
			return -1;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (want >= 0 && got != (size_t)want) {
		free(buf);
		return -1;
	}
	buf[got] = '\0';
	req->body = buf;
	req->body_len = got;
	return 0;
}

const char *
http_status_text(int status)
{
	switch (status) {
	case 200: return "OK";
	case 201: return "Created";
	case 202: return "Accepted";
	case 204: return "No Content";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 409: return "Conflict";
	case 413: return "Payload Too Large";
	case 415: return "Unsupported Media Type";
	case 429: return "Too Many Requests";
	case 500: return "Internal Server Error";
	case 503: return "Service Unavailable";
	default:  return "Unknown";
	}
}

int
http_write(struct http_request *req, const char *buf, size_t len)
{
	if (req->write_failed)
		return -1;
	if (req->io.write(req->io.ctx, buf, len) == -1) {
		req->write_failed = true;
		return -1;
	}
	return 0;
}

int
http_flush(struct http_request *req)
{
	if (req->write_failed)
		return -1;
	if (req->io.flush && req->io.flush(req->io.ctx) == -1) {
		req->write_failed = true;
		return -1;
	}
	return 0;
}

int
http_send_headers(struct http_request *req, int status,
    const char *content_type, const char *extra)
{
	char	head[1024];
	int	n;

	if (req->headers_sent)
		return -1;
	req->headers_sent = true;
	req->status = status;
	n = snprintf(head, sizeof(head), "Status: %d %s\r\n%s%s%s%s\r\n",
	    status, http_status_text(status),
	    content_type ? "Content-Type: " : "", content_type ? content_type : "",
	    content_type ? "\r\n" : "", extra ? extra : "");
	if (n < 0 || (size_t)n >= sizeof(head))
		return -1;
	return http_write(req, head, (size_t)n);
}

int
http_reply(struct http_request *req, int status, const char *content_type,
    const char *extra, const char *body, size_t len)
{
	if (http_send_headers(req, status, content_type, extra) == -1)
		return -1;
	if (len > 0 && http_write(req, body, len) == -1)
		return -1;
	return 0;
}

int
http_reply_json(struct http_request *req, int status, struct json_object *obj)
{
	size_t		 len;
	const char	*s;
	int		 rc;

	s = json_object_to_json_string_length(obj,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
	rc = http_reply(req, status, "application/json", NULL, s, len);
	json_object_put(obj);
	return rc;
}

int
http_reply_error_h(struct http_request *req, int status, const char *code,
    const char *message, const char *extra)
{
	struct json_object	*root, *err;
	const char		*s;
	size_t			 len;
	int			 rc;

	root = json_object_new_object();
	err = json_object_new_object();
	json_object_object_add(err, "code", json_object_new_string(code));
	json_object_object_add(err, "message", json_object_new_string(message));
	json_object_object_add(root, "error", err);
	s = json_object_to_json_string_length(root,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
	rc = http_reply(req, status, "application/json", extra, s, len);
	json_object_put(root);
	return rc;
}

int
http_reply_error(struct http_request *req, int status, const char *code,
    const char *message)
{
	return http_reply_error_h(req, status, code, message, NULL);
}

int
http_reply_empty(struct http_request *req, int status)
{
	return http_send_headers(req, status, NULL, NULL);
}
