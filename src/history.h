/*
 * history.h — the chat history a model call sends: the system prompt, then
 * the conversation's stored messages as OpenAI chat messages, repaired so
 * that every assistant tool call has exactly one tool result after it, then
 * trimmed to the profile's context window.
 */
#ifndef CDM_HISTORY_H
#define CDM_HISTORY_H

#include <stddef.h>

struct json_object;

/* A new array of chat messages; NULL on a storage error. */
struct json_object *history_build(const char *conv_id, const char *system_prompt);

/* Estimated tokens of one message: its JSON bytes / 4, plus 4. */
size_t	history_tokens(struct json_object *msg);
size_t	history_total(struct json_object *msgs);

/*
 * Make msgs fit budget tokens: first shorten the oldest tool outputs, then
 * drop the oldest exchanges (a user message and all that followed it).
 * msgs[0] (the system prompt) and the newest user message with what
 * follows it are never touched. Returns the estimate afterwards, which can
 * still exceed budget when the newest exchange alone does.
 */
size_t	history_trim(struct json_object *msgs, size_t budget);

#endif
