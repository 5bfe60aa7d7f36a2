/*
 * profiles.c — model profile resolution. For now only the configuration's
 * profiles exist; per-user profiles arrive with the encrypted store.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sodium.h>

#include "app.h"
#include "profiles.h"
#include "util.h"

int
profile_resolve(const char *user_id, const char *name,
    struct resolved_profile *out, char *err, size_t errlen)
{
	const struct llm_profile	*p;
	const char			*key = NULL;

	memset(out, 0, sizeof(*out));
	if (name == NULL || *name == '\0')
		name = app.cfg.llm.default_profile;
	if ((p = config_profile(&app.cfg, name)) == NULL) {
		snprintf(err, errlen, "no model profile named '%s'", name);
		return 1;
	}
	if (p->api_key_env != NULL && *p->api_key_env != '\0') {
		if ((key = getenv(p->api_key_env)) == NULL || *key == '\0') {
			snprintf(err, errlen, "model profile '%s': the environment "
			    "variable %s holding its API key is not set", name,
			    p->api_key_env);
			return -1;
		}
	}
	strlcpy_(out->name, p->name, sizeof(out->name));
	out->base_url = xstrdup(p->base_url);
	out->model = xstrdup(p->model ? p->model : "");
	out->api_key = key ? xstrdup(key) : NULL;
	out->context_window = p->context_window;
	out->max_output_tokens = p->max_output_tokens;
	out->temperature = p->temperature;
	return 0;
}

void
profile_free(struct resolved_profile *p)
{
	free(p->base_url);
	free(p->model);
	if (p->api_key) {
		sodium_memzero(p->api_key, strlen(p->api_key));
		free(p->api_key);
	}
	memset(p, 0, sizeof(*p));
}
