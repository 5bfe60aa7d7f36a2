/* unit-router.c — route matching: literals, placeholders, 404 and 405. */
#include "tap.h"
#include "router.h"

static void h(struct http_request *r, const struct route_params *p, void *c) {}
static void h2(struct http_request *r, const struct route_params *p, void *c) {}

static const struct route routes[] = {
	{ "GET",  "/api/health", h, 0 },
	{ "GET",  "/api/conversations/{}", h, 0 },
	{ "PATCH", "/api/conversations/{}", h2, 0 },
	{ "POST", "/api/conversations/{}/turns/{}/cancel", h2, 0 },
};
#define N (sizeof(routes) / sizeof(routes[0]))

int
main(void)
{
	const struct route	*r = NULL;
	struct route_params	 p;
	char			 allow[64], longseg[300];

	is_int(router_match(routes, N, "GET", "/api/health", &r, &p, allow,
	    sizeof(allow)), ROUTE_FOUND, "literal route found");
	ok(r == &routes[0], "the right route");
	is_int(router_match(routes, N, "GET", "/api/conversations/abc", &r, &p,
	    allow, sizeof(allow)), ROUTE_FOUND, "placeholder matches");
	is_str(p.v[0], "abc", "placeholder captured");
	is_int(p.n, 1, "one parameter");
	is_int(router_match(routes, N, "POST", "/api/conversations/a/turns/b/cancel",
	    &r, &p, allow, sizeof(allow)), ROUTE_FOUND, "two placeholders");
	is_str(p.v[1], "b", "second captured");
	is_int(router_match(routes, N, "DELETE", "/api/conversations/abc", &r, &p,
	    allow, sizeof(allow)), ROUTE_BAD_METHOD, "wrong method is 405");
	is_str(allow, "GET, PATCH", "Allow lists both methods");
	is_int(router_match(routes, N, "GET", "/api/conversations/", &r, &p,
	    allow, sizeof(allow)), ROUTE_NOT_FOUND, "empty segment does not match");
	is_int(router_match(routes, N, "GET", "/api/conversations/a/b", &r, &p,
	    allow, sizeof(allow)), ROUTE_NOT_FOUND, "extra segment does not match");
	is_int(router_match(routes, N, "GET", "/api/healthz", &r, &p,
	    allow, sizeof(allow)), ROUTE_NOT_FOUND, "prefix is not a match");
	is_int(router_match(routes, N, "GET", "/api/health/", &r, &p,
	    allow, sizeof(allow)), ROUTE_NOT_FOUND, "trailing slash is not a match");
	memset(longseg, 'a', sizeof(longseg));
	memcpy(longseg, "/api/conversations/", 19);
	longseg[sizeof(longseg) - 1] = '\0';
	is_int(router_match(routes, N, "GET", longseg, &r, &p, allow,
	    sizeof(allow)), ROUTE_NOT_FOUND, "over-long segment never matches");
	return done_testing();
}
