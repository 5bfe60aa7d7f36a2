/*
 * sse.c — event-stream framing and writing. Every frame is flushed on its own
 * so that nginx (with fastcgi_buffering off) and Apache pass it on at once.
 */
#include <string.h>
#include <stdio.h>

#include "http.h"
#include "sse.h"
#include "util.h"

int
sse_format_event(int64_t id, const char *type, const char *data, char **out,
    size_t *outlen)
{
	size_t	 dlen = strlen(data), lines = 1, cap, n;
	char	*buf, *p;
	const char *s;

	if (strpbrk(type, "\r\n") != NULL)
		return -1;
	for (s = data; *s; s++)
		if (*s == '\n')
			lines++;
	cap = 64 + strlen(type) + dlen + lines * 7;
	buf = xmalloc(cap);
	n = (size_t)snprintf(buf, cap, "id: %lld\nevent: %s\n",
	    (long long)id, type);
	p = buf + n;
	s = data;
	for (;;) {
		size_t len = strcspn(s, "\r\n");

		memcpy(p, "data: ", 6);
		p += 6;
		memcpy(p, s, len);
		p += len;
		*p++ = '\n';
		s += len;
		if (*s == '\0')
			break;
		/* CRLF, CR and LF each end one line. */
		if (s[0] == '\r' && s[1] == '\n')
			s++;
		s++;
	}
	*p++ = '\n';
	*p = '\0';
	*out = buf;
	*outlen = (size_t)(p - buf);
	return 0;
}

int
sse_begin(struct http_request *req)
{
	static const char hello[] = ": ok\n\n";

	if (http_send_headers(req, 200, "text/event-stream",
	    "Cache-Control: no-cache\r\nX-Accel-Buffering: no\r\n") == -1)
		return -1;
	/*
	 * A first comment right away: Apache (both modules) holds the
	 * response head back until body bytes follow, and an EventSource
	 * reports "open" only when the head arrives.
	 */
	return sse_send(req, hello, sizeof(hello) - 1);
}

int
sse_send(struct http_request *req, const char *frame, size_t len)
{
	if (http_write(req, frame, len) == -1)
		return -1;
	return http_flush(req);
}

int
sse_comment(struct http_request *req, const char *text)
{
	char	buf[256];
	int	n;

	n = snprintf(buf, sizeof(buf), ": %s\n\n", text);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return -1;
	return sse_send(req, buf, (size_t)n);
}

int64_t
sse_parse_last_id(const char *s)
{
	if (s == NULL || *s == '\0')
		return 0;
	return parse_uint(s, INT64_MAX / 2);
}
