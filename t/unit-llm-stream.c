/*
 * unit-llm-stream.c — the SSE parser and the chunk interpreter: lines split
 * anywhere, CR/LF/CRLF, comments, [DONE], tool-call deltas by index, the
 * every-call-at-index-0 style, repeated names, usage, errors and bounds.
 */
#include <stdlib.h>
#include <string.h>
#include "tap.h"
#include "llm_stream.h"

struct collect {
	char	text[4096];
	int	calls;
};

static void
on_text(void *arg, const char *t, size_t len)
{
	struct collect *c = arg;

	strncat(c->text, t, len);
	c->calls++;
}

/* Feed s byte by byte: the hardest split there is. */
static int
feed_bytes(struct llm_stream *s, const char *data)
{
	size_t i;

	for (i = 0; data[i] != '\0'; i++)
		if (llm_stream_feed(s, data + i, 1) == -1)
			return -1;
	return 0;
}

static const char *chat =
    ": a comment first\n"
    "\n"
    "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"Hel\"}}]}\n\n"
    "event: ignored\n"
    "data: {\"choices\":[{\"delta\":{\"content\":\"lo \\u00e9\"}}]}\r\n\r\n"
    "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\r\r"
    "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2,\"total_tokens\":7}}\n\n"
    "data: [DONE]\n\n";

static void
test_text(void)
{
	struct llm_stream	s;
	struct collect		c;
	size_t			i, len = strlen(chat);

	/* Every possible split point of the whole stream into two feeds. */
	for (i = 0; i <= len; i++) {
		memset(&c, 0, sizeof(c));
		llm_stream_init(&s, on_text, &c);
		if (llm_stream_feed(&s, chat, i) == -1 ||
		    llm_stream_feed(&s, chat + i, len - i) == -1 ||
		    llm_stream_finish(&s) == -1 ||
		    strcmp(c.text, "Hello \xc3\xa9") != 0 || !s.done ||
		    strcmp(s.finish_reason, "stop") != 0 || s.usage == NULL) {
			ok(0, "split at %zu: %s / '%s'", i, s.error, c.text);
			llm_stream_free(&s);
			return;
		}
		llm_stream_free(&s);
	}
	ok(1, "text survives a split at every byte position");

	memset(&c, 0, sizeof(c));
	llm_stream_init(&s, on_text, &c);
	ok(feed_bytes(&s, chat) == 0 && llm_stream_finish(&s) == 0,
	    "byte-by-byte feed");
	is_str(c.text, "Hello \xc3\xa9", "text assembled in order");
	is_str(s.text, "Hello \xc3\xa9", "the whole answer is kept");
	is_str(s.finish_reason, "stop", "finish_reason");
	ok(s.usage && strstr(s.usage, "\"total_tokens\":7") != NULL,
	    "usage from the chunk without choices");
	ok(s.done, "[DONE] seen");
	is_int(c.calls, 2, "one callback per content delta");
	llm_stream_free(&s);
}

static void
test_tool_calls(void)
{
	struct llm_stream s;
	const char *by_index =
	    "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":\"read_file\",\"arguments\":\"\"}}]}}]}\n\n"
	    "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"call_b\",\"function\":{\"name\":\"list_dir\",\"arguments\":\"{\\\"pa\"}}]}}]}\n\n"
	    "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"path\\\":\"}}]}}]}\n\n"
	    "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"name\":\"read_file\",\"arguments\":\"\\\"a.txt\\\"}\"}}]}}]}\n\n"
	    "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":1,\"function\":{\"arguments\":\"th\\\":\\\"\\\"}\"}}]}}]}\n\n"
	    "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n"
	    "data: [DONE]\n\n";
	const char *index0 =
	    "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"x1\",\"function\":{\"name\":\"read_file\",\"arguments\":\"{}\"}}]}}]}\n\n"
	    "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"x2\",\"function\":{\"name\":\"list_dir\",\"arguments\":\"{\"}}]}}]}\n\n"
	    "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"}\"}}]}}]}\n\n"
	    "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n";

	llm_stream_init(&s, NULL, NULL);
	ok(feed_bytes(&s, by_index) == 0 && llm_stream_finish(&s) == 0,
	    "parallel calls by index");
	is_int(s.ncalls, 2, "two calls");
	is_str(s.calls[0].id, "call_a", "id of call 0");
	is_str(s.calls[0].name, "read_file", "a repeated name is not appended");
	is_str(s.calls[0].args, "{\"path\":\"a.txt\"}", "arguments of call 0 concatenated");
	is_str(s.calls[1].name, "list_dir", "name of call 1");
	is_str(s.calls[1].args, "{\"path\":\"\"}", "interleaved fragments of call 1");
	is_str(s.finish_reason, "tool_calls", "finish_reason tool_calls");
	llm_stream_free(&s);

	llm_stream_init(&s, NULL, NULL);
	ok(feed_bytes(&s, index0) == 0 && llm_stream_finish(&s) == 0,
	    "every call at index 0, told apart by id; no [DONE] but a finish_reason");
	is_int(s.ncalls, 2, "a new id at the same index is a new call");
	is_str(s.calls[1].id, "x2", "its id");
	is_str(s.calls[1].args, "{}", "its fragments");
	is_str(s.calls[0].args, "{}", "the first call untouched");
	llm_stream_free(&s);

	/* Missing and duplicate ids are replaced by usable ones. */
	llm_stream_init(&s, NULL, NULL);
	{
		const char *d = "data: {\"choices\":[{\"delta\":{\"tool_calls\":["
		    "{\"index\":0,\"function\":{\"name\":\"a\"}},"
		    "{\"index\":1,\"id\":\"dup\",\"function\":{\"name\":\"b\"}},"
		    "{\"index\":2,\"id\":\"dup\",\"function\":{\"name\":\"c\"}},"
		    "{\"index\":3,\"id\":\"../x y\",\"function\":{\"name\":\"d\"}}]},"
		    "\"finish_reason\":\"tool_calls\"}]}\n\n";
		ok(llm_stream_feed(&s, d, strlen(d)) == 0 &&
		    llm_stream_finish(&s) == 0, "calls with odd ids");
	}
	llm_stream_fix_ids(&s);
	ok(strncmp(s.calls[0].id, "call_", 5) == 0, "a missing id is made up");
	is_str(s.calls[1].id, "dup", "the first of two equal ids is kept");
	ok(strcmp(s.calls[2].id, "dup") != 0, "the second is replaced");
	ok(strncmp(s.calls[3].id, "call_", 5) == 0, "an id with / and space is replaced");
	llm_stream_free(&s);
}

static void
test_errors(void)
{
	struct llm_stream	 s;
	char			*big;

	llm_stream_init(&s, NULL, NULL);
	ok(llm_stream_feed(&s, "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n", 47) == 0 &&
	    llm_stream_finish(&s) == -1, "no [DONE] and no finish_reason: an error");
	ok(strstr(s.error, "ended before it finished") != NULL, "saying so: %s", s.error);
	llm_stream_free(&s);

	llm_stream_init(&s, NULL, NULL);
	ok(llm_stream_feed(&s, "data: {not json\n\n", 17) == -1, "a chunk that is not JSON");
	ok(strstr(s.error, "not JSON") != NULL, "named: %s", s.error);
	llm_stream_free(&s);

	llm_stream_init(&s, NULL, NULL);
	ok(llm_stream_feed(&s, "data: {\"error\":{\"message\":\"model overloaded\"}}\n\n", 50) == -1,
	    "an error object in the stream");
	ok(strstr(s.error, "model overloaded") != NULL, "with the endpoint's message: %s", s.error);
	llm_stream_free(&s);

	llm_stream_init(&s, NULL, NULL);
	ok(llm_stream_feed(&s, "data: [1,2]\n\n", 13) == -1, "a chunk that is not an object");
	llm_stream_free(&s);

	llm_stream_init(&s, NULL, NULL);
	ok(llm_stream_feed(&s, "data: [DONE]\n\ndata: {junk\n\n", 27) == 0 &&
	    llm_stream_finish(&s) == 0, "nothing after [DONE] counts");
	llm_stream_free(&s);

	big = malloc(SSE_LINE_MAX + 16);
	memset(big, 'a', SSE_LINE_MAX + 15);
	big[SSE_LINE_MAX + 15] = '\0';
	memcpy(big, "data: ", 6);
	llm_stream_init(&s, NULL, NULL);
	ok(llm_stream_feed(&s, big, strlen(big)) == -1, "an event past 4 MiB is refused");
	llm_stream_free(&s);
	free(big);

	/* A last event without the blank line after it still counts. */
	llm_stream_init(&s, NULL, NULL);
	ok(llm_stream_feed(&s, "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"length\"}]}", 57) == 0 &&
	    llm_stream_finish(&s) == 0, "an unterminated last event is dispatched");
	is_str(s.finish_reason, "length", "its finish_reason");
	llm_stream_free(&s);
}

int
main(void)
{
	test_text();
	test_tool_calls();
	test_errors();
	return done_testing();
}
