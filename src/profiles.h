/*
 * profiles.h — resolving the model profile a conversation uses: the user's
 * own profiles (stored encrypted, issue 5) first, then the configuration's
 * llm.profiles. The resolved API key is a secret: never log it, never put it
 * in an event or the model's context.
 */
#ifndef CDM_PROFILES_H
#define CDM_PROFILES_H

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

#endif
