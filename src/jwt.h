/*
 * jwt.h — JSON Web Tokens, HS256 only (RFC 7519 / RFC 7515 compact form).
 * Signing uses libsodium's HMAC-SHA256 and verification compares in constant
 * time. Any header whose "alg" is not exactly "HS256" (including "none") is
 * rejected before the signature is looked at.
 */
#ifndef CDM_JWT_H
#define CDM_JWT_H

#include <stddef.h>
#include <stdint.h>

#define JWT_SUB_MAX	64
#define JWT_MAX_LEN	4096	/* longer tokens are rejected unread */

struct jwt_claims {
	char	 sub[JWT_SUB_MAX + 1];
	int64_t	 iat;
	int64_t	 exp;
	int64_t	 nbf;		/* 0 when absent */
};

enum jwt_err {
	JWT_OK = 0,
	JWT_MALFORMED,		/* not three base64url parts, bad JSON, too long */
	JWT_BAD_ALG,		/* header alg is not HS256, or typ is not JWT */
	JWT_BAD_SIGNATURE,
	JWT_EXPIRED,
	JWT_NOT_YET_VALID,	/* nbf or iat in the future (beyond leeway) */
	JWT_BAD_CLAIMS,		/* sub/iat/exp missing or of the wrong type */
};

/* Returns a newly allocated token, or NULL on allocation failure. */
char	*jwt_sign(const unsigned char *key, size_t keylen, const char *sub,
	    int64_t iat, int64_t exp);

/*
 * Verify TOKEN against each of the nkeys keys (the current secret first, then
 * previous ones); fill claims on JWT_OK. now is seconds since the epoch.
 */
enum jwt_err jwt_verify(const char *token, const unsigned char *const *keys,
	    const size_t *keylens, size_t nkeys, int64_t now,
	    struct jwt_claims *claims);

const char *jwt_strerror(enum jwt_err e);

#endif
