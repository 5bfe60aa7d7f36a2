/*
 * secrets.c — secrets for tools. The encrypted store is not built yet, so a
 * user has no secrets: no environment to add and nothing to redact.
 */
#include <stdlib.h>

#include "secrets.h"

int
secrets_sandbox_env(const char *user_id, struct sandbox_env **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	return 0;
}

void
secrets_env_free(struct sandbox_env *env, size_t n)
{
	free(env);
}

int
secrets_redact(const char *user_id, char **text, size_t *len)
{
	return 0;
}
