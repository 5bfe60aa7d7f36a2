/*
 * secrets.h — per-user secrets as the rest of the server uses them: the
 * environment a user's sandboxed commands get, and redaction of secret values
 * from tool output before it reaches the event log or the model.
 */
#ifndef CDM_SECRETS_H
#define CDM_SECRETS_H

#include <stddef.h>

#include "sandbox.h"

/*
 * The secrets the user marked for their commands, as name/value pairs to pass
 * in the sandbox environment. *out is allocated (free with
 * secrets_env_free); 0 / -1.
 */
int	secrets_sandbox_env(const char *user_id, struct sandbox_env **out,
	    size_t *n);
void	secrets_env_free(struct sandbox_env *env, size_t n);

/*
 * Replace every occurrence of any of the user's secret values in *text
 * (length *len) by "[secret:NAME]". *text may be reallocated. 0 / -1.
 */
int	secrets_redact(const char *user_id, char **text, size_t *len);

#endif
