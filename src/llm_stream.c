/*
 * llm_stream.c — turning a streamed chat completion into text, tool calls,
 * a finish reason and usage. It trusts nothing it reads: every buffer is
 * bounded, a chunk that is not JSON is an error rather than a crash, and
 * tool-call arguments are only concatenated here (they are parsed, once,
 * when the call is dispatched). It does no I/O; llm.c feeds it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "llm_stream.h"
#include "util.h"

/* Grow *buf so that len + add (+ a NUL) fits; -1 past max. */
static int
buf_reserve(char **buf, size_t *cap, size_t len, size_t add, size_t max)
{
	size_t want;

	if (add > max || len > max - add)
		return -1;
	want = len + add + 1;
	if (want <= *cap)
		return 0;
	if (*cap * 2 > want)
		want = *cap * 2;
	if (want < 256)
		want = 256;
	*buf = xrealloc(*buf, want);
	*cap = want;
	return 0;
}

static int
buf_append(char **buf, size_t *len, size_t *cap, const char *s, size_t n,
    size_t max)
{
	if (buf_reserve(buf, cap, *len, n, max) == -1)
		return -1;
	memcpy(*buf + *len, s, n);
	*len += n;
	(*buf)[*len] = '\0';
	return 0;
}

/* ------------------------------------------------------------ SSE */

void
sse_parser_init(struct sse_parser *p, sse_data_fn fn, void *arg)
{
	memset(p, 0, sizeof(*p));
	p->fn = fn;
	p->arg = arg;
}

void
sse_parser_free(struct sse_parser *p)
{
	free(p->line);
	free(p->data);
	memset(p, 0, sizeof(*p));
}

static int
sse_dispatch(struct sse_parser *p)
{
	int rc = 0;

	if (p->has_data)
		rc = p->fn(p->arg, p->data ? p->data : "", p->datalen);
	p->datalen = 0;
	if (p->data)
		p->data[0] = '\0';
	p->has_data = 0;
	return rc;
}

/* One complete line, without its end. */
static int
sse_line(struct sse_parser *p, const char *line, size_t len)
{
	const char	*colon, *value;
	size_t		 flen, vlen;

	if (len == 0)
		return sse_dispatch(p);
	if (line[0] == ':')
		return 0;		/* a comment, e.g. a keep-alive */
	colon = memchr(line, ':', len);
	flen = colon ? (size_t)(colon - line) : len;
	if (flen != 4 || memcmp(line, "data", 4) != 0)
		return 0;		/* event:, id:, retry: mean nothing here */
	value = colon ? colon + 1 : line + len;
	vlen = len - (size_t)(value - line);
	if (vlen > 0 && value[0] == ' ') {
		value++;
		vlen--;
	}
	if (p->has_data && buf_append(&p->data, &p->datalen, &p->datacap, "\n",
	    1, SSE_LINE_MAX) == -1)
		return -1;
	if (buf_append(&p->data, &p->datalen, &p->datacap, value, vlen,
	    SSE_LINE_MAX) == -1)
		return -1;
	p->has_data = 1;
	return 0;
}

int
sse_parser_feed(struct sse_parser *p, const char *buf, size_t len)
{
	size_t i, start = 0;

	for (i = 0; i < len; i++) {
		char c = buf[i];

		if (c != '\n' && c != '\r')
			continue;
		/* The LF of a CRLF whose CR ended the previous feed or line. */
		if (c == '\n' && p->last_cr && i == start && p->linelen == 0) {
			p->last_cr = 0;
			start = i + 1;
			continue;
		}
		if (buf_append(&p->line, &p->linelen, &p->linecap, buf + start,
		    i - start, SSE_LINE_MAX) == -1)
			return -1;
		if (sse_line(p, p->line ? p->line : "", p->linelen) == -1)
			return -1;
		p->linelen = 0;
		p->last_cr = c == '\r';
		start = i + 1;
	}
	if (start < len) {
		p->last_cr = 0;
		if (buf_append(&p->line, &p->linelen, &p->linecap, buf + start,
		    len - start, SSE_LINE_MAX) == -1)
			return -1;
	}
	return 0;
}

int
sse_parser_finish(struct sse_parser *p)
{
	if (p->linelen > 0) {
		if (sse_line(p, p->line, p->linelen) == -1)
			return -1;
		p->linelen = 0;
	}
	return sse_dispatch(p);
}

/* ------------------------------------------------------------ chunks */

static int	stream_data(void *arg, const char *data, size_t len);

void
llm_stream_init(struct llm_stream *s, llm_text_fn on_text, void *arg)
{
	memset(s, 0, sizeof(*s));
	s->on_text = on_text;
	s->arg = arg;
	sse_parser_init(&s->parser, stream_data, s);
}

void
llm_stream_free(struct llm_stream *s)
{
	size_t i;

	sse_parser_free(&s->parser);
	free(s->text);
	free(s->usage);
	for (i = 0; i < s->ncalls; i++)
		free(s->calls[i].args);
	memset(s, 0, sizeof(*s));
}

static int
stream_fail(struct llm_stream *s, const char *msg)
{
	if (s->error[0] == '\0')
		snprintf(s->error, sizeof(s->error), "%s", msg);
	return -1;
}

static const char *
str_member(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (o && json_object_object_get_ex(o, key, &v) &&
	    json_object_is_type(v, json_type_string))
		return json_object_get_string(v);
	return NULL;
}

/*
 * The call a delta continues. Servers differ: most number parallel calls
 * by index; some send every call at index 0 and tell them apart only by a
 * new id. So a delta whose id differs from the id its index already has
 * starts a new call.
 */
static struct llm_call *
call_for_delta(struct llm_stream *s, int index, const char *id)
{
	struct llm_call	*c = NULL;
	size_t		 i;

	for (i = s->ncalls; i > 0; i--)
		if (s->calls[i - 1].index == index) {
			c = &s->calls[i - 1];
			break;
		}
	if (c != NULL && (id == NULL || *id == '\0' || c->id[0] == '\0' ||
	    strcmp(c->id, id) == 0))
		return c;
	if (s->ncalls == LLM_CALLS_MAX)
		return NULL;
	c = &s->calls[s->ncalls++];
	memset(c, 0, sizeof(*c));
	c->index = index;
	return c;
}

static int
tool_call_delta(struct llm_stream *s, struct json_object *tc, int pos)
{
	struct json_object	*v, *fn = NULL;
	struct llm_call		*c;
	const char		*id, *name, *args;
	int			 index = pos;

	if (!json_object_is_type(tc, json_type_object))
		return stream_fail(s, "a tool_calls delta is not an object");
	if (json_object_object_get_ex(tc, "index", &v) &&
	    json_object_is_type(v, json_type_int))
		index = json_object_get_int(v);
	id = str_member(tc, "id");
	if (json_object_object_get_ex(tc, "function", &v) &&
	    json_object_is_type(v, json_type_object))
		fn = v;
	name = str_member(fn, "name");
	args = str_member(fn, "arguments");
	if ((c = call_for_delta(s, index, id)) == NULL)
		return stream_fail(s, "the model asked for more than 64 tool "
		    "calls at once");
	/* Id and name are set once; servers that repeat them are ignored. */
	if (id && *id && c->id[0] == '\0')
		strlcpy_(c->id, id, sizeof(c->id));
	if (name && *name && c->name[0] == '\0') {
		if (strlen(name) > LLM_NAME_MAX)
			return stream_fail(s, "a tool name longer than 64 bytes");
		strlcpy_(c->name, name, sizeof(c->name));
	}
	if (args && *args && buf_append(&c->args, &c->argslen, &c->argscap,
	    args, strlen(args), LLM_ARGS_MAX) == -1)
		return stream_fail(s, "tool-call arguments longer than 1 MiB");
	return 0;
}

int
llm_stream_chunk(struct llm_stream *s, const char *json, size_t len)
{
	struct json_tokener	*tok;
	struct json_object	*o, *v, *choice = NULL, *delta = NULL, *err;
	const char		*text, *msg, *fr;
	size_t			 i, n, tlen;
	int			 rc = -1;

	tok = json_tokener_new_ex(32);
	o = json_tokener_parse_ex(tok, json, (int)len);
	if (o == NULL || json_tokener_get_error(tok) != json_tokener_success ||
	    json_tokener_get_parse_end(tok) != len) {
		json_tokener_free(tok);
		json_object_put(o);
		return stream_fail(s, "the model endpoint sent a chunk that is "
		    "not JSON");
	}
	json_tokener_free(tok);
	if (!json_object_is_type(o, json_type_object)) {
		stream_fail(s, "the model endpoint sent a chunk that is not a "
		    "JSON object");
		goto out;
	}
	if (json_object_object_get_ex(o, "error", &err) && err != NULL) {
		msg = str_member(err, "message");
		if (msg == NULL && json_object_is_type(err, json_type_string))
			msg = json_object_get_string(err);
		snprintf(s->error, sizeof(s->error), "the model endpoint "
		    "reported an error: %.400s", msg ? msg : "(no message)");
		goto out;
	}
	if (json_object_object_get_ex(o, "usage", &v) &&
	    json_object_is_type(v, json_type_object)) {
		free(s->usage);
		s->usage = xstrdup(json_object_to_json_string_ext(v,
		    JSON_C_TO_STRING_PLAIN));
	}
	if (json_object_object_get_ex(o, "choices", &v) &&
	    json_object_is_type(v, json_type_array) &&
	    json_object_array_length(v) > 0)
		choice = json_object_array_get_idx(v, 0);
	if (choice == NULL || !json_object_is_type(choice, json_type_object)) {
		rc = 0;		/* e.g. the usage chunk: no choices */
		goto out;
	}
	if ((fr = str_member(choice, "finish_reason")) != NULL)
		strlcpy_(s->finish_reason, fr, sizeof(s->finish_reason));
	/* "message" rather than "delta": a server that did not stream. */
	if (!json_object_object_get_ex(choice, "delta", &delta))
		json_object_object_get_ex(choice, "message", &delta);
	if (delta == NULL || !json_object_is_type(delta, json_type_object)) {
		rc = 0;
		goto out;
	}
	if ((text = str_member(delta, "content")) != NULL &&
	    (tlen = strlen(text)) > 0) {
		if (buf_append(&s->text, &s->textlen, &s->textcap, text, tlen,
		    LLM_TEXT_MAX) == -1) {
			stream_fail(s, "the answer grew past 8 MiB");
			goto out;
		}
		if (s->on_text)
			s->on_text(s->arg, text, tlen);
	}
	if (json_object_object_get_ex(delta, "tool_calls", &v) &&
	    json_object_is_type(v, json_type_array)) {
		n = json_object_array_length(v);
		for (i = 0; i < n; i++)
			if (tool_call_delta(s, json_object_array_get_idx(v, i),
			    (int)i) == -1)
				goto out;
	}
	rc = 0;
out:
	json_object_put(o);
	return rc;
}

static int
stream_data(void *arg, const char *data, size_t len)
{
	struct llm_stream *s = arg;

	if (s->done)
		return 0;	/* nothing counts after [DONE] */
	if (len == 6 && memcmp(data, "[DONE]", 6) == 0) {
		s->done = 1;
		return 0;
	}
	return llm_stream_chunk(s, data, len);
}

int
llm_stream_feed(struct llm_stream *s, const char *buf, size_t len)
{
	if (s->error[0] != '\0')
		return -1;
	if (sse_parser_feed(&s->parser, buf, len) == -1)
		return stream_fail(s, "the model endpoint sent an event larger "
		    "than 4 MiB");
	return 0;
}

int
llm_stream_finish(struct llm_stream *s)
{
	if (s->error[0] != '\0')
		return -1;
	if (sse_parser_finish(&s->parser) == -1)
		return stream_fail(s, "the model endpoint sent an unusable "
		    "last event");
	if (s->error[0] != '\0')
		return -1;
	if (!s->done && s->finish_reason[0] == '\0')
		return stream_fail(s, "the model's stream ended before it "
		    "finished (no [DONE] and no finish_reason)");
	return 0;
}

int
llm_call_id_valid(const char *id)
{
	size_t i, n = strlen(id);

	if (n == 0 || n > LLM_CALL_ID_MAX)
		return 0;
	for (i = 0; i < n; i++) {
		char c = id[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '_' || c == '-'))
			return 0;
	}
	return 1;
}

void
llm_stream_fix_ids(struct llm_stream *s)
{
	char	rid[ID_BUFSZ];
	size_t	i, j;
	int	dup;

	for (i = 0; i < s->ncalls; i++) {
		dup = 0;
		for (j = 0; j < i; j++)
			if (strcmp(s->calls[j].id, s->calls[i].id) == 0)
				dup = 1;
		if (llm_call_id_valid(s->calls[i].id) && !dup)
			continue;
		random_id(rid);
		snprintf(s->calls[i].id, sizeof(s->calls[i].id), "call_%s",
		    rid);
	}
}
