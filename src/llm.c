/*
 * llm.c — the libcurl side of the LLM client. A transfer runs on a
 * curl_multi handle polled in 100 ms steps, so a cancelled turn, an idle
 * endpoint or a pending delta flush (the tick callback) is noticed promptly
 * without a thread of its own. It knows HTTP and retries, not chunks: body
 * bytes go to llm_stream.c. The API key goes into one header and is never
 * logged or copied into an error message.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <curl/curl.h>
#include <json-c/json.h>
#include <sodium.h>

#include "llm.h"
#include "log.h"
#include "util.h"

#define ERR_BODY_MAX		(64 * 1024)	/* of a non-200 answer */
#define RETRY_AFTER_MAX		60		/* seconds we honour */
#define BACKOFF_MAX		30		/* seconds */
#define POLL_MS			100

struct xfer {
	const struct llm_request *rq;
	struct llm_stream	 *s;
	CURL			 *easy;
	long			  status;	/* once known */
	int			  started;	/* first body byte seen */
	char			 *errbody;
	size_t			  errlen, errcap;
	int			  retry_after;	/* seconds, -1 none */
	int64_t			  last_byte_ms;
	int			  parse_failed;
};

int
llm_global_init(void)
{
	return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
}

void
llm_global_cleanup(void)
{
	curl_global_cleanup();
}

static size_t
on_header(char *buf, size_t size, size_t n, void *arg)
{
	struct xfer	*x = arg;
	size_t		 len = size * n;
	char		 v[32];
	size_t		 i, o = 0;

	if (len > 12 && strncasecmp(buf, "Retry-After:", 12) == 0) {
		for (i = 12; i < len && o + 1 < sizeof(v); i++)
			if (!isspace((unsigned char)buf[i]))
				v[o++] = buf[i];
		v[o] = '\0';
		/* Seconds only; an HTTP-date falls back to our backoff. */
		x->retry_after = (int)parse_uint(v, 86400);
	}
	return len;
}

static size_t
on_body(char *buf, size_t size, size_t n, void *arg)
{
	struct xfer	*x = arg;
	size_t		 len = size * n, take;

	x->last_byte_ms = mono_ms();
	if (!x->started) {
		x->started = 1;
		curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &x->status);
	}
	if (x->status != 200) {
		/* An error answer: keep its start for the message. */
		take = len;
		if (x->errlen + take > ERR_BODY_MAX)
			take = ERR_BODY_MAX - x->errlen;
		if (take > 0) {
			x->errbody = xrealloc(x->errbody, x->errlen + take + 1);
			memcpy(x->errbody + x->errlen, buf, take);
			x->errlen += take;
			x->errbody[x->errlen] = '\0';
		}
		return len;
	}
	if (llm_stream_feed(x->s, buf, len) == -1) {
		x->parse_failed = 1;
		return 0;	/* aborts the transfer */
	}
	return len;
}

/* "message" of an OpenAI-style error body, else the body as printable text. */
static void
error_message(const char *body, size_t len, char *out, size_t outlen)
{
	struct json_object	*o, *e, *m;
	size_t			 i, k = 0;

	out[0] = '\0';
	if (body == NULL || len == 0) {
		snprintf(out, outlen, "(empty body)");
		return;
	}
	if ((o = json_tokener_parse(body)) != NULL) {
		m = NULL;
		if (json_object_object_get_ex(o, "error", &e)) {
			if (json_object_is_type(e, json_type_string))
				m = e;
			else
				json_object_object_get_ex(e, "message", &m);
		} else
			json_object_object_get_ex(o, "message", &m);
		if (m && json_object_is_type(m, json_type_string))
			snprintf(out, outlen, "%.300s", json_object_get_string(m));
		json_object_put(o);
		if (out[0] != '\0')
			return;
	}
	for (i = 0; i < len && k + 1 < outlen && k < 300; i++) {
		unsigned char c = (unsigned char)body[i];
		out[k++] = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
	}
	out[k] = '\0';
}

/* Sleep up to ms in POLL_MS steps; 1 when cancelled meanwhile. */
static int
wait_cancellable(const struct llm_request *rq, int64_t ms)
{
	struct timespec	ts = { 0, POLL_MS * 1000000L };
	int64_t		end = mono_ms() + ms;

	while (mono_ms() < end) {
		if (rq->cancel && *rq->cancel)
			return 1;
		if (rq->tick)
			rq->tick(rq->arg);
		nanosleep(&ts, NULL);
	}
	return rq->cancel && *rq->cancel;
}

enum attempt { A_OK, A_RETRY, A_FAIL, A_CANCEL };

static enum attempt
attempt_run(const struct llm_request *rq, struct llm_stream *s,
    struct curl_slist *hdrs, const char *url, int *http_status,
    int *retry_after, char *err, size_t errlen)
{
	struct xfer	 x;
	CURLM		*multi;
	CURLMsg		*msg;
	CURLcode	 res = CURLE_OK;
	char		 cerr[CURL_ERROR_SIZE] = "", why[400];
	enum attempt	 out = A_FAIL;
	int		 running = 1, left, numfds, wait, t;

	memset(&x, 0, sizeof(x));
	x.rq = rq;
	x.s = s;
	x.retry_after = -1;
	x.last_byte_ms = mono_ms();
	if ((x.easy = curl_easy_init()) == NULL ||
	    (multi = curl_multi_init()) == NULL) {
		if (x.easy)
			curl_easy_cleanup(x.easy);
		snprintf(err, errlen, "cannot set up an HTTP client");
		return A_FAIL;
	}
	curl_easy_setopt(x.easy, CURLOPT_URL, url);
	curl_easy_setopt(x.easy, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(x.easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(x.easy, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(x.easy, CURLOPT_POST, 1L);
	curl_easy_setopt(x.easy, CURLOPT_POSTFIELDS, rq->body);
	curl_easy_setopt(x.easy, CURLOPT_POSTFIELDSIZE_LARGE,
	    (curl_off_t)rq->body_len);
	curl_easy_setopt(x.easy, CURLOPT_CONNECTTIMEOUT, (long)rq->connect_timeout_s);
	curl_easy_setopt(x.easy, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(x.easy, CURLOPT_WRITEDATA, &x);
	curl_easy_setopt(x.easy, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(x.easy, CURLOPT_HEADERDATA, &x);
	curl_easy_setopt(x.easy, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(x.easy, CURLOPT_TCP_NODELAY, 1L);
	curl_easy_setopt(x.easy, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_multi_add_handle(multi, x.easy);

	while (running) {
		if (curl_multi_perform(multi, &running) != CURLM_OK)
			break;
		if (!running)
			break;
		if (rq->cancel && *rq->cancel) {
			out = A_CANCEL;
			goto done;
		}
		wait = POLL_MS;
		if (rq->tick && (t = rq->tick(rq->arg)) >= 0 && t < wait)
			wait = t;
		if (mono_ms() - x.last_byte_ms > (int64_t)rq->idle_timeout_s * 1000) {
			snprintf(err, errlen, "the model endpoint sent nothing for "
			    "%d s (engine.llm_idle_timeout_seconds)",
			    rq->idle_timeout_s);
			goto done;
		}
		curl_multi_poll(multi, NULL, 0, wait, &numfds);
	}
	if (rq->cancel && *rq->cancel) {
		out = A_CANCEL;
		goto done;
	}
	while ((msg = curl_multi_info_read(multi, &left)) != NULL)
		if (msg->msg == CURLMSG_DONE)
			res = msg->data.result;
	curl_easy_getinfo(x.easy, CURLINFO_RESPONSE_CODE, &x.status);
	*http_status = (int)x.status;
	*retry_after = x.retry_after;

	if (x.parse_failed) {
		snprintf(err, errlen, "%s", s->error);
		goto done;
	}
	if (x.status != 0 && x.status != 200) {
		error_message(x.errbody, x.errlen, why, sizeof(why));
		snprintf(err, errlen, "the model endpoint answered HTTP %ld: %s",
		    x.status, why);
		if (x.status == 429 || x.status >= 500)
			out = A_RETRY;
		goto done;
	}
	if (res != CURLE_OK && !x.started) {
		snprintf(err, errlen, "cannot reach the model endpoint: %s",
		    cerr[0] ? cerr : curl_easy_strerror(res));
		goto done;
	}
	/*
	 * A broken connection: a half-received last event is not judged, the
	 * answer counts only if its finish_reason had arrived.
	 */
	if (res != CURLE_OK) {
		if (s->finish_reason[0] != '\0' && s->error[0] == '\0') {
			out = A_OK;
			goto done;
		}
		snprintf(err, errlen, "the model's stream ended before it "
		    "finished: the connection broke (%s)",
		    cerr[0] ? cerr : curl_easy_strerror(res));
		goto done;
	}
	if (llm_stream_finish(s) == -1) {
		snprintf(err, errlen, "%s", s->error);
		goto done;
	}
	out = A_OK;
done:
	curl_multi_remove_handle(multi, x.easy);
	curl_easy_cleanup(x.easy);
	curl_multi_cleanup(multi);
	free(x.errbody);
	return out;
}

enum llm_status
llm_chat(const struct llm_request *rq, struct llm_stream *s, int *http_status,
    char *err, size_t errlen)
{
	struct curl_slist	*hdrs = NULL;
	char			*url, *auth = NULL;
	size_t			 blen = strlen(rq->base_url);
	enum attempt		 a = A_FAIL;
	int			 attempt, retry_after;
	int64_t			 wait_ms;

	*http_status = 0;
	err[0] = '\0';
	while (blen > 0 && rq->base_url[blen - 1] == '/')
		blen--;
	url = xasprintf("%.*s/chat/completions", (int)blen, rq->base_url);
	hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
	hdrs = curl_slist_append(hdrs, "Accept: text/event-stream");
	hdrs = curl_slist_append(hdrs, "Expect:");
	if (rq->api_key && *rq->api_key) {
		auth = xasprintf("Authorization: Bearer %s", rq->api_key);
		hdrs = curl_slist_append(hdrs, auth);
		sodium_memzero(auth, strlen(auth));
		free(auth);
	}

	memset(s, 0, sizeof(*s));
	for (attempt = 0;; attempt++) {
		llm_stream_free(s);
		llm_stream_init(s, rq->on_text, rq->arg);
		retry_after = -1;
		a = attempt_run(rq, s, hdrs, url, http_status, &retry_after,
		    err, errlen);
		if (a != A_RETRY)
			break;
		if (attempt >= rq->max_retries) {
			size_t n = strlen(err);

			snprintf(err + n, errlen - n, " (after %d retries)",
			    attempt);
			a = A_FAIL;
			break;
		}
		if (retry_after >= 0)
			wait_ms = (int64_t)(retry_after > RETRY_AFTER_MAX ?
			    RETRY_AFTER_MAX : retry_after) * 1000;
		else
			wait_ms = (int64_t)(attempt < 5 ? 1 << attempt : BACKOFF_MAX) * 1000;
		if (wait_ms > BACKOFF_MAX * 1000 && retry_after < 0)
			wait_ms = BACKOFF_MAX * 1000;
		log_info("model endpoint: %s; retry %d in %lld ms", err,
		    attempt + 1, (long long)wait_ms);
		if (wait_cancellable(rq, wait_ms)) {
			a = A_CANCEL;
			break;
		}
	}
	/* The header list holds the key: wipe it before freeing. */
	for (struct curl_slist *h = hdrs; h; h = h->next)
		sodium_memzero(h->data, strlen(h->data));
	curl_slist_free_all(hdrs);
	free(url);
	switch (a) {
	case A_OK:
		return LLM_OK;
	case A_CANCEL:
		return LLM_CANCELLED;
	default:
		return LLM_FAILED;
	}
}
