/*
 * router.c — route table matching. Deliberately simple: a linear scan over a
 * few dozen routes costs less than the FastCGI parameter parsing before it,
 * and a table is easy to review. It does no percent-decoding: ids are
 * base64url, and an encoded segment simply matches nothing.
 */
#include <string.h>

#include "router.h"

/* Match one pattern; 1 on a match with params filled. */
static int
pattern_match(const char *pat, const char *path, struct route_params *p)
{
	p->n = 0;
	while (*pat && *path) {
		if (pat[0] == '{' && pat[1] == '}') {
			size_t len = strcspn(path, "/");

			if (len == 0 || len > ROUTE_PARAM_MAX ||
			    p->n == ROUTE_MAX_PARAMS)
				return 0;
			memcpy(p->v[p->n], path, len);
			p->v[p->n][len] = '\0';
			p->n++;
			pat += 2;
			path += len;
			continue;
		}
		if (*pat != *path)
			return 0;
		pat++;
		path++;
	}
	return *pat == '\0' && *path == '\0';
}

enum route_result
router_match(const struct route *routes, size_t n, const char *method,
    const char *path, const struct route **out, struct route_params *params,
    char *allow, size_t allowlen)
{
	struct route_params	scratch;
	size_t			i, used = 0;
	int			path_seen = 0;

	if (allowlen > 0)
		allow[0] = '\0';
	for (i = 0; i < n; i++) {
		if (!pattern_match(routes[i].pattern, path, &scratch))
			continue;
		if (strcmp(routes[i].method, method) == 0) {
			*out = &routes[i];
			*params = scratch;
			return ROUTE_FOUND;
		}
		path_seen = 1;
		/* Append the method unless it is already listed. */
		if (strstr(allow, routes[i].method) == NULL) {
			size_t len = strlen(routes[i].method);

			if (used + len + 3 < allowlen) {
				if (used > 0) {
					memcpy(allow + used, ", ", 2);
					used += 2;
				}
				memcpy(allow + used, routes[i].method, len + 1);
				used += len;
			}
		}
	}
	return path_seen ? ROUTE_BAD_METHOD : ROUTE_NOT_FOUND;
}
