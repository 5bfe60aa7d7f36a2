/*
 * llm.h — one streamed chat completion against an OpenAI-compatible
 * endpoint (POST {base_url}/chat/completions), with retries for 429 and 5xx,
 * connect and idle timeouts, and cancellation that takes effect within a
 * fraction of a second. The request body is built by the caller (engine).
 */
#ifndef CDM_LLM_H
#define CDM_LLM_H

#include <stddef.h>

#include "llm_stream.h"

struct llm_request {
	const char	 *base_url;
	const char	 *api_key;		/* NULL: no Authorization header */
	const char	 *body;			/* the JSON request */
	size_t		  body_len;
	int		  connect_timeout_s;
	int		  idle_timeout_s;	/* no byte for this long: fail */
	int		  max_retries;		/* for 429 and 5xx */
	volatile int	 *cancel;		/* non-zero: abort now */
	llm_text_fn	  on_text;		/* each piece of answer text */
	int		(*tick)(void *arg);	/* often; returns ms until it
						 * wants to run again, or -1 */
	void		 *arg;
};

enum llm_status {
	LLM_OK,
	LLM_FAILED,		/* err says why, in the endpoint's words */
	LLM_CANCELLED,
};

/* Call once from the main thread before any worker exists. */
int	llm_global_init(void);
void	llm_global_cleanup(void);

/*
 * Run the request; s is initialised here (free it with llm_stream_free in
 * every case) and holds what the model said. http_status gets the last
 * status seen (0 when none).
 */
enum llm_status llm_chat(const struct llm_request *rq, struct llm_stream *s,
	    int *http_status, char *err, size_t errlen);

#endif
