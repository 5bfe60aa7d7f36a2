/*
 * secrets.h — per-user secrets as the rest of the server uses them: the
 * environment a user's sandboxed commands get, and redaction of secret values
 * from tool output before it reaches the event log or the model.
 */
#ifndef CDM_SECRETS_H
#define CDM_SECRETS_H

#include <stdbool.h>
#include <stddef.h>

#include "sandbox.h"
#include "util.h"

#define SECRET_NAME_MAX		64
#define SECRET_VALUE_MAX	65536	/* bytes */
/*
 * Values shorter than this are not redacted (they would match ordinary
 * text) and cannot be passed to commands, whose output is redacted.
 */
#define SECRET_REDACT_MIN	8

/* The kinds of sealed value; bound into each ciphertext. */
#define VAULT_SECRET		"secret"
#define VAULT_PROFILE		"profile"

/* 1..64 of [A-Za-z0-9_.-]. */
bool	secret_name_valid(const char *name);
/* A name a shell accepts as a variable: [A-Za-z_][A-Za-z0-9_]*, no LD_*. */
bool	env_name_valid(const char *name);

/*
 * The sealed store (doc/security.md "Data at rest"). A read that opens a
 * value sealed with a previous key, or stored in plaintext while a key is
 * now configured, seals it again under the current key.
 *
 * vault_put: 0 / -1. vault_get: 0 with *value allocated (free with
 * crypto_plain_free), 1 absent, -1 failure with a sentence in err (never
 * the value). vault_delete: 0 deleted, 1 absent, -1.
 */
int	vault_put(const char *user_id, const char *kind, const char *name,
	    const char *value, size_t len, bool env);
int	vault_get(const char *user_id, const char *kind, const char *name,
	    char **value, size_t *len, char *err, size_t errlen);
int	vault_delete(const char *user_id, const char *kind, const char *name);

struct vault_entry {
	char	name[SECRET_NAME_MAX + 1];
	char	updated_at[TIME_BUFSZ];
	bool	env;
	char	error[256];	/* "" when the value opens */
};
/*
 * The user's entries of KIND, by name, each opened (and resealed if due)
 * to report the ones no configured key opens. 0 / -1.
 */
int	vault_list(const char *user_id, const char *kind,
	    struct vault_entry **out, size_t *n);

struct rotate_counts {
	size_t	resealed;	/* opened with a previous key, sealed anew */
	size_t	current;	/* already under the current key */
	size_t	plaintext;	/* stored in plaintext, now sealed */
	size_t	failed;		/* no configured key opens it, or error */
};
/*
 * Seal every stored value under the current key. failed(...) is called
 * for each value that could not be, with its owner's name, kind, name and
 * the reason. -1 only when the store could not be read at all.
 */
int	vault_rotate_all(struct rotate_counts *c,
	    void (*failed)(const char *username, const char *kind,
	    const char *name, const char *why, void *arg), void *arg);

/* One secret value as redaction sees it. */
struct secret_value {
	const char	*name;
	const char	*value;
	size_t		 len;
};
/*
 * Replace in *text every occurrence of each value (at least
 * SECRET_REDACT_MIN bytes; longer values first) by "[secret:NAME]".
 * Pure: no storage. Returns the number of replacements.
 */
size_t	redact_values(const struct secret_value *v, size_t n, char **text,
	    size_t *len);

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
 * (length *len) by "[secret:NAME]". *text may be reallocated. 0 / -1; on
 * -1 *text has been replaced by a notice that the output was withheld, so
 * a caller that ignores the error still leaks nothing.
 */
int	secrets_redact(const char *user_id, char **text, size_t *len);

#endif
