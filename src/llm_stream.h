/*
 * llm_stream.h — the pure half of the LLM client: an incremental
 * Server-Sent Events parser and the interpretation of OpenAI-style
 * chat.completion.chunk objects, including the assembly of tool-call deltas.
 * No network and no threads: bytes go in, text and calls come out, so all
 * of it is unit-tested (t/unit-llm-stream.c).
 */
#ifndef CDM_LLM_STREAM_H
#define CDM_LLM_STREAM_H

#include <stddef.h>

#define SSE_LINE_MAX		(4 * 1024 * 1024)	/* bytes of one event */
#define LLM_CALLS_MAX		64			/* tool calls per answer */
#define LLM_ARGS_MAX		(1024 * 1024)		/* argument bytes per call */
#define LLM_TEXT_MAX		(8 * 1024 * 1024)	/* answer text */
#define LLM_NAME_MAX		64
#define LLM_CALL_ID_MAX		64

/*
 * The SSE parser: feed it bytes as they arrive; each complete event's data
 * (its data: lines joined by '\n') is handed to the callback. Comments,
 * event:/id:/retry: fields and blank lines between events are skipped;
 * lines may end in LF, CRLF or CR and may be split anywhere across feeds.
 */
typedef int (*sse_data_fn)(void *arg, const char *data, size_t len);

struct sse_parser {
	char		*line;		/* the line being read */
	size_t		 linelen, linecap;
	char		*data;		/* data: of the event being read */
	size_t		 datalen, datacap;
	int		 has_data;
	int		 last_cr;	/* the previous byte ended a line with CR */
	sse_data_fn	 fn;
	void		*arg;
};

void	sse_parser_init(struct sse_parser *p, sse_data_fn fn, void *arg);
/* 0, or -1 when an event grew past SSE_LINE_MAX or fn returned -1. */
int	sse_parser_feed(struct sse_parser *p, const char *buf, size_t len);
/* An event still open at the end of the stream is dispatched (per spec it
 * would be dropped; servers that omit the final blank line exist). */
int	sse_parser_finish(struct sse_parser *p);
void	sse_parser_free(struct sse_parser *p);

/* One assembled tool call. */
struct llm_call {
	int	 index;			/* as the server numbered it */
	char	 id[LLM_CALL_ID_MAX + 1];
	char	 name[LLM_NAME_MAX + 1];
	char	*args;			/* concatenated fragments, NUL-ended */
	size_t	 argslen, argscap;
};

typedef void (*llm_text_fn)(void *arg, const char *text, size_t len);

/* What one streamed completion said. */
struct llm_stream {
	struct sse_parser parser;
	llm_text_fn	 on_text;
	void		*arg;

	char		*text;			/* the whole answer text */
	size_t		 textlen, textcap;
	struct llm_call	 calls[LLM_CALLS_MAX];
	size_t		 ncalls;
	char		 finish_reason[32];	/* "" until a chunk carries one */
	char		*usage;			/* JSON text of the usage object */
	int		 done;			/* data: [DONE] seen */
	char		 error[512];		/* set when the stream is unusable */
};

void	llm_stream_init(struct llm_stream *s, llm_text_fn on_text, void *arg);
/* Bytes of the response body. 0, or -1 with s->error set. */
int	llm_stream_feed(struct llm_stream *s, const char *buf, size_t len);
/* The body ended. 0 when the answer is complete, -1 with s->error set. */
int	llm_stream_finish(struct llm_stream *s);
/*
 * Give every call a usable id: a missing, repeated or odd one (anything but
 * 1..64 of [A-Za-z0-9_-]) is replaced by "call_" and a random id, so it can
 * travel in a URL and match its result unambiguously.
 */
void	llm_stream_fix_ids(struct llm_stream *s);
/* 1 when id is 1..64 of [A-Za-z0-9_-], the ids calls end up with. */
int	llm_call_id_valid(const char *id);
void	llm_stream_free(struct llm_stream *s);

/* One chunk's JSON, for tests and for servers that answer without SSE. */
int	llm_stream_chunk(struct llm_stream *s, const char *json, size_t len);

#endif
