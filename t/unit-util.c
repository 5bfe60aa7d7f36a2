/* unit-util.c — ids, timestamps, integer parsing, and the HTTP body reader. */
#include <stdlib.h>
#include <string.h>
#include <sodium.h>
#include "tap.h"
#include "http.h"
#include "util.h"

struct mem { const char *data; size_t len, pos; const char *cl; };

static const char *
mem_param(void *ctx, const char *name)
{
	struct mem *m = ctx;

	if (strcmp(name, "CONTENT_LENGTH") == 0)
		return m->cl;
	if (strcmp(name, "REQUEST_URI") == 0)
		return "/api/x?y=1";
	return NULL;
}

static int
mem_read(void *ctx, char *buf, size_t len)
{
	struct mem *m = ctx;
	size_t n = m->len - m->pos < len ? m->len - m->pos : len;

	memcpy(buf, m->data + m->pos, n);
	m->pos += n;
	return (int)n;
}

static int
body(const char *data, const char *cl, size_t max, struct http_request *req)
{
	static struct mem m;
	struct http_io io = { .param = mem_param, .ctx = &m, .peer_fd = -1 };

	m = (struct mem){ data, strlen(data), 0, cl };
	http_request_init(req, &io);
	return http_read_body(req, max, mem_read, &m);
}

int
main(void)
{
	char			a[ID_BUFSZ], b[ID_BUFSZ], ts[TIME_BUFSZ];
	struct http_request	req;

	if (sodium_init() < 0)
		return 1;
	random_id(a);
	random_id(b);
	is_int(strlen(a), ID_LEN, "id length");
	ok(strcmp(a, b) != 0, "two ids differ");
	ok(id_is_valid(a), "our id is valid");
	ok(!id_is_valid("abc"), "short id invalid");
	ok(!id_is_valid("../../../../etc/passwd.."), "path is not an id");
	ok(!id_is_valid("aaaaaaaaaaaaaaaaaaaaa/"), "slash is not in ids");
	time_rfc3339(ts, 1764735856123LL);
	is_str(ts, "2025-12-03T04:24:16.123Z", "RFC 3339 UTC");
	is_int(parse_uint("123", 1000), 123, "parse");
	is_int(parse_uint("1001", 1000), -1, "above max");
	is_int(parse_uint("", 10), -1, "empty");
	is_int(parse_uint("1 ", 10), -1, "trailing space");

	is_int(body("{\"a\":1}", "7", 100, &req), 0, "body read");
	is_str(req.body, "{\"a\":1}", "body content");
	is_str(req.path, "/api/x", "path without query");
	is_str(req.query, "y=1", "query split off");
	free(req.body);
	is_int(body("0123456789", "10", 5, &req), 413, "over the cap is 413");
	ok(req.body == NULL, "nothing kept");
	is_int(body("0123456789", NULL, 5, &req), 413,
	    "no length and over the cap is 413");
	is_int(body("01234", NULL, 5, &req), 0, "no length, exactly the cap");
	free(req.body);
	is_int(body("012", "10", 100, &req), -1, "short body is an error");
	is_int(body("", "abc", 100, &req), -1, "junk length is an error");
	return done_testing();
}
