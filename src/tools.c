/*
 * tools.c — the registry and everything every tool result goes through.
 * Validation covers the schema subset the registry uses (an object of
 * string/integer/boolean properties, required names, nothing extra); it is
 * not a general JSON-schema implementation. Tools themselves live in
 * tool_files.c and tool_shell.c; approval gating is the engine's, before
 * run() is ever called.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "app.h"
#include "secrets.h"
#include "tools.h"
#include "util.h"

static const struct tool_def registry[] = {
	{ "read_file",
	  "Read a text file of the workspace. Optionally only lines "
	  "start_line..end_line (1-based, inclusive).",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"path\":{\"type\":\"string\",\"description\":\"relative to the workspace root\"},"
	  "\"start_line\":{\"type\":\"integer\",\"minimum\":1},"
	  "\"end_line\":{\"type\":\"integer\",\"minimum\":1}},"
	  "\"required\":[\"path\"],\"additionalProperties\":false}",
	  tool_read_file, 0 },
	{ "write_file",
	  "Create or replace a file of the workspace with the given content.",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"path\":{\"type\":\"string\"},\"content\":{\"type\":\"string\"}},"
	  "\"required\":[\"path\",\"content\"],\"additionalProperties\":false}",
	  tool_write_file, 0 },
	{ "edit_file",
	  "Replace the one exact occurrence of old_text in a file by new_text. "
	  "Fails when old_text does not occur or occurs more than once.",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"path\":{\"type\":\"string\"},\"old_text\":{\"type\":\"string\"},"
	  "\"new_text\":{\"type\":\"string\"}},"
	  "\"required\":[\"path\",\"old_text\",\"new_text\"],"
	  "\"additionalProperties\":false}",
	  tool_edit_file, 0 },
	{ "list_dir",
	  "List a directory of the workspace (default: its root). Directories "
	  "end in '/'.",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"path\":{\"type\":\"string\"}},\"additionalProperties\":false}",
	  tool_list_dir, 0 },
	{ "search_files",
	  "Search the workspace's text files for a POSIX extended regular "
	  "expression; answers path:line: text, at most max_results lines.",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"pattern\":{\"type\":\"string\"},\"path\":{\"type\":\"string\"},"
	  "\"max_results\":{\"type\":\"integer\",\"minimum\":1}},"
	  "\"required\":[\"pattern\"],\"additionalProperties\":false}",
	  tool_search_files, 0 },
	{ "shell",
	  "Run a shell command (sh -c) in the workspace, in a sandbox without "
	  "network. The user may have to approve it first.",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"command\":{\"type\":\"string\"},"
	  "\"timeout_seconds\":{\"type\":\"integer\",\"minimum\":1}},"
	  "\"required\":[\"command\"],\"additionalProperties\":false}",
	  tool_shell, 1 },
};

#define NTOOLS	(sizeof(registry) / sizeof(registry[0]))

static struct json_object *schemas[NTOOLS];	/* parsed at init, read-only */
static struct json_object *request_tools;

int
tools_init(void)
{
	struct json_object	*t, *fn;
	size_t			 i;

	request_tools = json_object_new_array();
	for (i = 0; i < NTOOLS; i++) {
		if ((schemas[i] = json_tokener_parse(registry[i].parameters)) == NULL)
			return -1;	/* a typo in the table above */
		fn = json_object_new_object();
		json_object_object_add(fn, "name",
		    json_object_new_string(registry[i].name));
		json_object_object_add(fn, "description",
		    json_object_new_string(registry[i].description));
		json_object_object_add(fn, "parameters",
		    json_object_get(schemas[i]));
		t = json_object_new_object();
		json_object_object_add(t, "type", json_object_new_string("function"));
		json_object_object_add(t, "function", fn);
		json_object_array_add(request_tools, t);
	}
	return 0;
}

void
tools_cleanup(void)
{
	size_t i;

	for (i = 0; i < NTOOLS; i++) {
		json_object_put(schemas[i]);
		schemas[i] = NULL;
	}
	json_object_put(request_tools);
	request_tools = NULL;
}

const struct tool_def *
tools_find(const char *name)
{
	size_t i;

	for (i = 0; i < NTOOLS; i++)
		if (strcmp(registry[i].name, name) == 0)
			return &registry[i];
	return NULL;
}

struct json_object *
tools_request_json(void)
{
	return json_object_get(request_tools);
}

void
tool_fail(struct tool_result *res, const char *fmt, ...)
{
	va_list ap;

	res->ok = 0;
	va_start(ap, fmt);
	vsnprintf(res->error, sizeof(res->error), fmt, ap);
	va_end(ap);
}

void
tool_output(struct tool_result *res, char *buf, size_t len)
{
	free(res->output);
	res->output = buf;
	res->output_len = len;
}

static const char *
type_name(struct json_object *v)
{
	switch (json_object_get_type(v)) {
	case json_type_null:	return "null";
	case json_type_boolean:	return "a boolean";
	case json_type_double:	return "a number";
	case json_type_int:	return "an integer";
	case json_type_object:	return "an object";
	case json_type_array:	return "an array";
	case json_type_string:	return "a string";
	}
	return "something else";
}

static int
type_fits(const char *want, struct json_object *v)
{
	if (strcmp(want, "string") == 0)
		return json_object_is_type(v, json_type_string);
	if (strcmp(want, "integer") == 0)
		return json_object_is_type(v, json_type_int);
	if (strcmp(want, "boolean") == 0)
		return json_object_is_type(v, json_type_boolean);
	return 0;
}

static int
schema_check(const struct tool_def *t, struct json_object *schema,
    struct json_object *args, struct tool_result *res)
{
	struct json_object	*props, *req, *p, *ty, *min;
	size_t			 i, n;
	const char		*want;

	if (!json_object_is_type(args, json_type_object)) {
		tool_fail(res, "%s: the arguments must be a JSON object, not %s",
		    t->name, type_name(args));
		return -1;
	}
	json_object_object_get_ex(schema, "properties", &props);
	json_object_object_foreach(args, key, val) {
		if (!json_object_object_get_ex(props, key, &p)) {
			tool_fail(res, "%s: unknown argument '%.64s'", t->name, key);
			return -1;
		}
		json_object_object_get_ex(p, "type", &ty);
		want = json_object_get_string(ty);
		if (!type_fits(want, val)) {
			tool_fail(res, "%s: argument '%s' must be %s %s, not %s",
			    t->name, key, want[0] == 'i' ? "an" : "a", want,
			    type_name(val));
			return -1;
		}
		if (json_object_object_get_ex(p, "minimum", &min) &&
		    json_object_get_int64(val) < json_object_get_int64(min)) {
			tool_fail(res, "%s: argument '%s' must be at least %lld",
			    t->name, key, (long long)json_object_get_int64(min));
			return -1;
		}
	}
	if (json_object_object_get_ex(schema, "required", &req)) {
		n = json_object_array_length(req);
		for (i = 0; i < n; i++) {
			const char *k = json_object_get_string(
			    json_object_array_get_idx(req, i));
			if (!json_object_object_get_ex(args, k, NULL)) {
				tool_fail(res, "%s: the argument '%s' is required",
				    t->name, k);
				return -1;
			}
		}
	}
	return 0;
}

int
tools_parse_args(const struct tool_def *t, const char *args,
    struct json_object **out, struct tool_result *res)
{
	struct json_tokener	*tok;
	struct json_object	*o;
	size_t			 len = args ? strlen(args) : 0;
	enum json_tokener_error	 e;

	*out = NULL;
	/* Some servers send "" for a call without arguments. */
	if (len == 0) {
		args = "{}";
		len = 2;
	}
	tok = json_tokener_new_ex(64);
	o = json_tokener_parse_ex(tok, args, (int)len);
	e = json_tokener_get_error(tok);
	if (o == NULL || e != json_tokener_success ||
	    json_tokener_get_parse_end(tok) != len) {
		tool_fail(res, "%s: the arguments are not valid JSON (%s)",
		    t->name, e == json_tokener_success ? "trailing data" :
		    (e == json_tokener_continue ? "it ends too early" :
		    json_tokener_error_desc(e)));
		json_tokener_free(tok);
		json_object_put(o);
		return -1;
	}
	json_tokener_free(tok);
	if (schema_check(t, schemas[t - registry], o, res) == -1) {
		json_object_put(o);
		return -1;
	}
	*out = o;
	return 0;
}

const char *
tools_command(struct json_object *args)
{
	struct json_object *v;

	if (json_object_object_get_ex(args, "command", &v) &&
	    json_object_is_type(v, json_type_string))
		return json_object_get_string(v);
	return NULL;
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0. */
static size_t
utf8_seq(const unsigned char *s, size_t n)
{
	size_t	len, i;
	unsigned cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

/* Invalid bytes become U+FFFD and NUL becomes U+FFFD: events are text. */
static void
utf8_sanitize(char **buf, size_t *len)
{
	const unsigned char	*s = (const unsigned char *)*buf;
	char			*out;
	size_t			 i = 0, o = 0, k;

	for (i = 0; i < *len; i += k)
		if ((k = utf8_seq(s + i, *len - i)) == 0 || s[i] == 0)
			break;
	if (i == *len)
		return;
	out = xmalloc(*len * 3 + 1);
	for (i = 0; i < *len;) {
		k = utf8_seq(s + i, *len - i);
		if (k == 0 || s[i] == 0) {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
			continue;
		}
		memcpy(out + o, s + i, k);
		o += k;
		i += k;
	}
	out[o] = '\0';
	free(*buf);
	*buf = out;
	*len = o;
}

void
tools_finish(const struct tool_ctx *ctx, struct tool_result *res)
{
	size_t	 cap = (size_t)app.cfg.tools.output_cap_bytes, keep, n;
	char	*e, *out;

	if (res->output == NULL) {
		res->output = xstrdup("");
		res->output_len = 0;
	}
	/* Redact before cutting: a cut through a secret would leak its start. */
	if (secrets_redact(ctx->user_id, &res->output, &res->output_len) == -1) {
		free(res->output);
		res->output = xstrdup("");
		res->output_len = 0;
		tool_fail(res, "the output could not be checked for secrets and "
		    "was withheld");
	}
	n = strlen(res->error);
	e = xstrdup(res->error);
	if (secrets_redact(ctx->user_id, &e, &n) == 0)
		snprintf(res->error, sizeof(res->error), "%s", e);
	else
		snprintf(res->error, sizeof(res->error), "(error withheld)");
	free(e);

	utf8_sanitize(&res->output, &res->output_len);
	if (res->output_len > cap) {
		keep = cap;
		/* Cut on a character boundary. */
		while (keep > 0 && ((unsigned char)res->output[keep] & 0xc0) == 0x80)
			keep--;
		out = xasprintf("%.*s\n[output truncated: the first %zu of %zu "
		    "bytes are shown (tools.output_cap_bytes)]", (int)keep,
		    res->output, keep, res->output_len);
		free(res->output);
		res->output = out;
		res->output_len = strlen(out);
	}
}

char *
tools_model_content(const struct tool_result *res)
{
	if (res->ok) {
		if (res->has_exit_code && res->exit_code != 0)
			return xasprintf("%s\n[exit code %d]", res->output,
			    res->exit_code);
		return xstrdup(res->output ? res->output : "");
	}
	if (res->output && res->output_len > 0)
		return xasprintf("error: %s\n%s", res->error, res->output);
	return xasprintf("error: %s", res->error);
}

void
tool_result_free(struct tool_result *res)
{
	free(res->output);
	memset(res, 0, sizeof(*res));
}
