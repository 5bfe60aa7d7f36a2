/*
 * profiles.h — resolving the model profile a conversation uses: the user's
 * own profiles (stored encrypted, issue 5) first, then the configuration's
 * llm.profiles. The resolved API key is a secret: never log it, never put it
 * in an event or the model's context.
 */
#ifndef CDM_PROFILES_H
#define CDM_PROFILES_H

#include <stdbool.h>
#include <stddef.h>

#define PROFILE_NAME_MAX	64

struct resolved_profile {
	char	 name[PROFILE_NAME_MAX + 1];
	char	*base_url;
	char	*model;
	char	*api_key;		/* NULL when none; wiped on free */
	int	 context_window;
	int	 max_output_tokens;
	double	 temperature;
};

/*
 * name NULL or "" means llm.default_profile. 0 resolved, 1 no such profile,
 * -1 error (e.g. the API key's environment variable is unset: a sentence in
 * err, without the key).
 */
int	profile_resolve(const char *user_id, const char *name,
	    struct resolved_profile *out, char *err, size_t errlen);
void	profile_free(struct resolved_profile *p);

/*
 * A user's own profile as stored (table user_profiles; the API key is
 * the sealed value (user, "profile", name)). The key itself never leaves
 * the store through this structure: only whether there is one.
 */
#define PROFILE_URL_MAX		2048
#define PROFILE_MODEL_MAX	256
#define PROFILE_KEY_MAX		4096

struct user_profile {
	char	name[PROFILE_NAME_MAX + 1];
	char	base_url[PROFILE_URL_MAX + 1];
	char	model[PROFILE_MODEL_MAX + 1];
	int	context_window;
	int	max_output_tokens;
	double	temperature;
	bool	has_api_key;
	char	updated_at[32];
};

/* An API key we would put in an Authorization header: printable, no space. */
bool	profile_api_key_valid(const char *key);

/*
 * May a user's profile point at URL? Only at a base_url of llm.profiles or
 * under a prefix of llm.user_base_urls: the server talks to endpoints the
 * operator chose, never to one a user names (seed: "Network egress map").
 */
bool	profile_url_allowed(const char *url);

/*
 * Create or replace. api_key NULL keeps the stored key, "" removes it.
 * 0 / -1.
 */
int	user_profile_put(const char *user_id, const struct user_profile *p,
	    const char *api_key);
/* 0 / -1; *out allocated (free()). */
int	user_profile_list(const char *user_id, struct user_profile **out,
	    size_t *n);
/* 0 deleted, 1 absent, -1. */
int	user_profile_delete(const char *user_id, const char *name);

#endif
