/*
 * conversations.h — conversations and their messages, always looked up
 * together with the owner: a conversation of another user is reported exactly
 * like one that does not exist (1), so ids cannot be probed.
 */
#ifndef CDM_CONVERSATIONS_H
#define CDM_CONVERSATIONS_H

#include "util.h"

#define TITLE_MAX	512	/* bytes */
#define CONTENT_MAX	(512 * 1024)
#define MODEL_MAX	128

struct conversation {
	char	id[ID_BUFSZ];
	char	user_id[ID_BUFSZ];
	char	title[TITLE_MAX + 1];
	char	model[MODEL_MAX + 1];
	char	created_at[TIME_BUFSZ];
	char	updated_at[TIME_BUFSZ];
};

struct json_object;

/* 0 / -1 */
int	conv_create(const char *user_id, const char *title, const char *model,
	    struct conversation *out);
/* 0 found, 1 not found or not the user's, -1 error. */
int	conv_get_for_user(const char *id, const char *user_id,
	    struct conversation *out);
/* The user's conversations, newest first, as a JSON array; NULL on error. */
struct json_object *conv_list_for_user(const char *user_id);
/* 0, 1 not found, -1 */
int	conv_set_title(const char *id, const char *user_id, const char *title,
	    struct conversation *out);
int	conv_delete(const char *id, const char *user_id);

struct json_object *conv_to_json(const struct conversation *c);

/* The conversation's messages in order, as a JSON array; NULL on error. */
struct json_object *messages_list(const char *conv_id);

/*
 * Store a user message, queue a turn for it and append message.created, in
 * one transaction. 0, 1 when a turn of this conversation is running (409),
 * -1 error.
 */
int	messages_post_user(const char *conv_id, const char *content,
	    char message_id[ID_BUFSZ], char turn_id[ID_BUFSZ]);

/*
 * Cancel a queued or running turn and append turn.cancelled. 0 (also for a
 * turn that had already ended), 1 unknown turn, -1 error.
 */
int	turn_cancel(const char *conv_id, const char *turn_id);

#endif
