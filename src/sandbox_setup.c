/*
 * sandbox_setup.c — the stateless half of the server's sandbox client:
 * locating the helper, bwrap and the seccomp blob from the configuration,
 * the helper's environment, the SPAWN body, and the head-and-tail capture of
 * a command's output. No process, socket or thread is touched here.
 */
#include <sys/utsname.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "app.h"
#include "log.h"
#include "sandbox_setup.h"
#include "seccomp-blob.h"
#include "util.h"

/*
 * The helper binary: sandbox.helper_path, or when that is empty, the one
 * beside this executable (a build tree), else the installed one.
 */
void
sbx_helper_path(char *out, size_t len)
{
	char	self[PATH_MAX], *slash;
	ssize_t	n;

	if (*app.cfg.sandbox.helper_path != '\0') {
		snprintf(out, len, "%s", app.cfg.sandbox.helper_path);
		return;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		if ((slash = strrchr(self, '/')) != NULL) {
			*slash = '\0';
			snprintf(out, len, "%s/codumentor-sandbox", self);
			if (access(out, X_OK) == 0)
				return;
		}
	}
	snprintf(out, len, "%s", CDM_HELPER_PATH);
}

/* bwrap by name in PATH (or /usr/bin:/bin), or as configured with a '/'. */
void
sbx_bwrap_path(char *out, size_t len)
{
	const char	*name = app.cfg.sandbox.bwrap_path, *path, *p, *colon;
	size_t		 n;

	snprintf(out, len, "%s", name);
	if (strchr(name, '/') != NULL)
		return;
	if ((path = getenv("PATH")) == NULL)
		path = "/usr/bin:/bin";
	for (p = path; *p != '\0'; p = colon + 1) {
		colon = strchr(p, ':');
		n = colon ? (size_t)(colon - p) : strlen(p);
		if (n > 0 && *p == '/') {
			snprintf(out, len, "%.*s/%s", (int)n, p, name);
			if (access(out, X_OK) == 0)
				return;
		}
		if (colon == NULL)
			break;
	}
	snprintf(out, len, "%s", name);		/* the helper says "not found" */
}

const char *
sbx_seccomp_mode(void)
{
	const char *m = app.cfg.sandbox.seccomp;

	if (strcmp(m, "off") == 0 || strcmp(m, "enforce") == 0)
		return m;
	return "audit";		/* "default" */
}

/* <seccomp_dir>/<arch>-<mode>.bpf for this machine. */
void
sbx_blob_path(char *out, size_t len, const char *mode)
{
	struct utsname	 u;
	const char	*arch = NULL;

	if (uname(&u) == 0)
		arch = seccomp_blob_arch(u.machine);
	/* No blob family for this machine: a name that cannot exist, so the
	 * check fails closed and says which machine it was. */
	snprintf(out, len, "%s/%s-%s%s", app.cfg.sandbox.seccomp_dir,
	    arch ? arch : (uname(&u) == 0 ? u.machine : "unknown"), mode,
	    SECCOMP_BLOB_SUFFIX);
}

/*
 * The helper's environment: the variables the operator listed
 * (sandbox.env_passthrough), with this process's values. Nothing else,
 * least of all CODUMENTOR_JWT_SECRET or API keys.
 */
size_t
sbx_passenv(char **v, size_t max)
{
	char		*list = xstrdup(app.cfg.sandbox.env_passthrough);
	char		*save = NULL, *name;
	const char	*val, *c;
	size_t		 n = 0;

	for (name = strtok_r(list, ", \t", &save); name != NULL && n < max;
	    name = strtok_r(NULL, ", \t", &save)) {
		for (c = name; *c != '\0'; c++)
			if (!(*c == '_' || (*c >= 'A' && *c <= 'Z') ||
			    (*c >= 'a' && *c <= 'z') ||
			    (c != name && *c >= '0' && *c <= '9')))
				break;
		if (*c != '\0') {
			log_warn("sandbox.env_passthrough: '%s' is not a "
			    "variable name; ignored", name);
			continue;
		}
		if ((val = getenv(name)) != NULL)
			v[n++] = xasprintf("%s=%s", name, val);
	}
	v[n] = NULL;
	free(list);
	return n;
}

static void
add_str_array(struct json_object *o, const char *key, const char *const *v)
{
	struct json_object *a = json_object_new_array();

	for (; *v != NULL; v++)
		json_object_array_add(a, json_object_new_string(*v));
	json_object_object_add(o, key, a);
}

char *
sbx_spawn_body(const char *lower, const char *upper, const char *work,
    const char *merged, const char *const *argv, const struct sandbox_env *env,
    size_t nenv, int net, int hold, int timeout_ms)
{
	struct json_object	*o = json_object_new_object(), *a, *p;
	char			*s;
	size_t			 i;

	json_object_object_add(o, "profile", json_object_new_string("shell"));
	json_object_object_add(o, "lower", json_object_new_string(lower));
	json_object_object_add(o, "upper", json_object_new_string(upper));
	json_object_object_add(o, "work", json_object_new_string(work));
	json_object_object_add(o, "merged", json_object_new_string(merged));
	add_str_array(o, "argv", argv);
	a = json_object_new_array();
	for (i = 0; i < nenv; i++) {
		p = json_object_new_array();
		json_object_array_add(p, json_object_new_string(env[i].name));
		json_object_array_add(p, json_object_new_string(env[i].value));
		json_object_array_add(a, p);
	}
	json_object_object_add(o, "env", a);
	json_object_object_add(o, "net", json_object_new_boolean(net));
	json_object_object_add(o, "hold", json_object_new_boolean(hold));
	json_object_object_add(o, "timeout_ms",
	    json_object_new_int64(timeout_ms > 0 ? timeout_ms : 0));
	s = xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return s;
}

void
capture_add(struct capture *c, const char *p, size_t n)
{
	size_t k;

	c->total += n;
	k = c->head_cap - c->head_len;
	if (k > n)
		k = n;
	memcpy(c->head + c->head_len, p, k);
	c->head_len += k;
	p += k;
	n -= k;
	for (; n > 0 && c->tail_cap > 0; p++, n--) {
		c->tail[c->tail_pos] = *p;
		c->tail_pos = (c->tail_pos + 1) % c->tail_cap;
		if (c->tail_len < c->tail_cap)
			c->tail_len++;
	}
}

void
capture_finish(struct capture *c, struct sandbox_result *res)
{
	char	 marker[96];
	size_t	 ml = 0, start, first;
	uint64_t omitted = c->total - c->head_len - c->tail_len;

	if (omitted > 0) {
		res->truncated = 1;
		ml = (size_t)snprintf(marker, sizeof(marker), "\n[... %llu "
		    "bytes of output omitted ...]\n", (unsigned long long)omitted);
	}
	res->output = xmalloc(c->head_len + ml + c->tail_len + 1);
	memcpy(res->output, c->head, c->head_len);
	memcpy(res->output + c->head_len, marker, ml);
	/* Until the ring fills it is in order from 0; then from tail_pos. */
	start = c->tail_len < c->tail_cap ? 0 : c->tail_pos;
	first = c->tail_len < c->tail_cap ? c->tail_len : c->tail_cap - start;
	memcpy(res->output + c->head_len + ml, c->tail + start, first);
	memcpy(res->output + c->head_len + ml + first, c->tail,
	    c->tail_len - first);
	res->output_len = c->head_len + ml + c->tail_len;
	res->output[res->output_len] = '\0';
}
