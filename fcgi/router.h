/*
 * router.h — matches a method and a path against a table of routes. Patterns
 * are literal segments and "{}" placeholders, which capture one non-empty
 * segment each. A path that matches some route but not its method yields 405
 * with the list of allowed methods.
 */
#ifndef CDM_ROUTER_H
#define CDM_ROUTER_H

#include <stddef.h>

#define ROUTE_MAX_PARAMS	4
#define ROUTE_PARAM_MAX		128	/* a longer segment never matches */

struct http_request;

struct route_params {
	char	v[ROUTE_MAX_PARAMS][ROUTE_PARAM_MAX + 1];
	size_t	n;
};

/* ctx is whatever the application passes along (the caller's identity). */
typedef void (*route_fn)(struct http_request *req,
    const struct route_params *params, void *ctx);

struct route {
	const char	*method;
	const char	*pattern;
	route_fn	 fn;
	int		 flags;		/* for the application (auth level) */
};

enum route_result { ROUTE_FOUND, ROUTE_NOT_FOUND, ROUTE_BAD_METHOD };

/*
 * On ROUTE_FOUND, *out is the route and params are filled. On
 * ROUTE_BAD_METHOD, allow gets "GET, POST" style text.
 */
enum route_result router_match(const struct route *routes, size_t n,
	    const char *method, const char *path, const struct route **out,
	    struct route_params *params, char *allow, size_t allowlen);

#endif
