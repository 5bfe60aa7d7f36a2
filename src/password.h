/*
 * password.h — password hashing with argon2id (libsodium crypto_pwhash_str),
 * and a per-username limiter for failed logins. Hashing is memory-hard on
 * purpose, so the number of hashes computed at once is bounded here too.
 */
#ifndef CDM_PASSWORD_H
#define CDM_PASSWORD_H

#include <stddef.h>
#include <stdint.h>
#include <sodium.h>

#define PASSWORD_MAX_LEN	1024	/* longer passwords are refused */

/* out must hold crypto_pwhash_STRBYTES. 0 or -1. */
int	password_hash(const char *password, char *out);
/* 1 when PASSWORD matches HASH, 0 otherwise (including a malformed hash). */
int	password_verify(const char *hash, const char *password);

/*
 * Failed-login limiter. After max_failures failures for one username within
 * lockout_seconds, login_throttle_check() answers the number of seconds to
 * wait (> 0) until the window passes; a success clears the name. The table is
 * bounded: when full, the oldest entries are forgotten.
 */
void	login_throttle_init(int max_failures, int lockout_seconds);
int	login_throttle_check(const char *username, int64_t now);
void	login_throttle_fail(const char *username, int64_t now);
void	login_throttle_success(const char *username);

#endif
