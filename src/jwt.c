/*
 * jwt.c — HS256 JSON Web Tokens in compact form: sign the server's own
 * session tokens and verify the ones clients send back. It deliberately knows
 * one algorithm and one token shape; there is no JWK handling, no "kid", no
 * "none" and no RS/ES algorithms, so an attacker cannot pick the verifier.
 * base64url and HMAC-SHA256 come from libsodium, JSON from json-c.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <sodium.h>

#include "jwt.h"

#define JWT_LEEWAY	60	/* seconds of clock skew allowed on iat/nbf */
#define JWT_JSON_DEPTH	4	/* our header and payload are flat objects */
#define JWT_MAC_LEN	crypto_auth_hmacsha256_BYTES

/*
 * The header we sign with, and the only shape we issue. Verification does
 * not compare against it byte for byte: other producers (tests, tools) may
 * order the members differently, and the signature is what binds the bytes.
 */
static const char jwt_header[] = "{\"alg\":\"HS256\",\"typ\":\"JWT\"}";

static void
jwt_hmac(const unsigned char *key, size_t keylen, const char *msg,
    size_t msglen, unsigned char mac[JWT_MAC_LEN])
{
	crypto_auth_hmacsha256_state st;

	/*
	 * The init/update/final form takes a key of any length (HMAC hashes
	 * long keys), unlike crypto_auth_hmacsha256() which wants 32 bytes.
	 */
	crypto_auth_hmacsha256_init(&st, key, keylen);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)msg, msglen);
	crypto_auth_hmacsha256_final(&st, mac);
	/* The state holds key-derived pads; do not leave them on the stack. */
	sodium_memzero(&st, sizeof(st));
}

/*
 * Decode one base64url part (no padding, canonical) into out, which holds
 * outsz bytes. The result is NUL-terminated so JSON can be parsed from it.
 * Returns the decoded length, or -1 when the part is not valid base64url or
 * does not fit.
 */
static long
jwt_b64_decode(const char *in, size_t inlen, unsigned char *out, size_t outsz)
{
	size_t	 binlen;

	if (outsz == 0)
		return -1;
	if (sodium_base642bin(out, outsz - 1, in, inlen, NULL, &binlen, NULL,
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0)
		return -1;
	out[binlen] = '\0';
	return (long)binlen;
}

/*
 * Parse a decoded part as a JSON object. Strict mode, no trailing bytes, no
 * embedded NUL and valid UTF-8, so that what we read is what was signed and
 * no lenient-parser trick changes its meaning. NULL when it is not an object.
 */
static json_object *
jwt_json_parse(const unsigned char *buf, size_t len)
{
	json_tokener	*tok;
	json_object	*obj;

	if (memchr(buf, '\0', len) != NULL)
		return NULL;
	if ((tok = json_tokener_new_ex(JWT_JSON_DEPTH)) == NULL)
		return NULL;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT |
	    JSON_TOKENER_VALIDATE_UTF8);
	/* len + 1 passes the terminating NUL: "this is the end of input". */
	obj = json_tokener_parse_ex(tok, (const char *)buf, (int)len + 1);
	if (json_tokener_get_error(tok) != json_tokener_success ||
	    json_tokener_get_parse_end(tok) < len) {
		json_object_put(obj);
		obj = NULL;
	}
	json_tokener_free(tok);
	if (obj != NULL && !json_object_is_type(obj, json_type_object)) {
		json_object_put(obj);
		obj = NULL;
	}
	return obj;
}

/* JWT_OK when the header names HS256 (and, if it says, type JWT). */
static enum jwt_err
jwt_check_header(json_object *hdr)
{
	json_object	*v;

	if (!json_object_object_get_ex(hdr, "alg", &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    strcmp(json_object_get_string(v), "HS256") != 0 ||
	    (size_t)json_object_get_string_len(v) != strlen("HS256"))
		return JWT_BAD_ALG;
	if (json_object_object_get_ex(hdr, "typ", &v) &&
	    (!json_object_is_type(v, json_type_string) ||
	    strcmp(json_object_get_string(v), "JWT") != 0 ||
	    (size_t)json_object_get_string_len(v) != strlen("JWT")))
		return JWT_BAD_ALG;
	return JWT_OK;
}

/*
 * An integer claim: present, a JSON integer (not a double, string or bool)
 * and not negative. 0 when absent, -1 when wrong.
 */
static int
jwt_claim_int(json_object *payload, const char *name, int64_t *out, int *found)
{
	json_object	*v;

	*found = 0;
	if (!json_object_object_get_ex(payload, name, &v))
		return 0;
	if (!json_object_is_type(v, json_type_int))
		return -1;
	*out = json_object_get_int64(v);
	if (*out < 0)
		return -1;
	*found = 1;
	return 0;
}

static enum jwt_err
jwt_check_claims(json_object *payload, int64_t now, struct jwt_claims *c)
{
	json_object	*v;
	const char	*sub;
	size_t		 sublen;
	int		 found;

	memset(c, 0, sizeof(*c));

	if (!json_object_object_get_ex(payload, "sub", &v) ||
	    !json_object_is_type(v, json_type_string))
		return JWT_BAD_CLAIMS;
	sub = json_object_get_string(v);
	sublen = (size_t)json_object_get_string_len(v);
	/* strlen() catches a "\u0000" that would cut the name short. */
	if (sublen == 0 || sublen > JWT_SUB_MAX || strlen(sub) != sublen)
		return JWT_BAD_CLAIMS;
	memcpy(c->sub, sub, sublen);
	c->sub[sublen] = '\0';

	if (jwt_claim_int(payload, "iat", &c->iat, &found) == -1 || !found)
		return JWT_BAD_CLAIMS;
	if (jwt_claim_int(payload, "exp", &c->exp, &found) == -1 || !found)
		return JWT_BAD_CLAIMS;
	if (jwt_claim_int(payload, "nbf", &c->nbf, &found) == -1)
		return JWT_BAD_CLAIMS;

	if (c->exp <= now)
		return JWT_EXPIRED;
	/* Unsigned differences: no overflow whatever now the caller passes. */
	if (c->nbf > now && (uint64_t)c->nbf - (uint64_t)now > JWT_LEEWAY)
		return JWT_NOT_YET_VALID;
	if (c->iat > now && (uint64_t)c->iat - (uint64_t)now > JWT_LEEWAY)
		return JWT_NOT_YET_VALID;
	return JWT_OK;
}

/* Add v to obj; a NULL v (allocation failure) is an error, not a null. */
static int
jwt_add(json_object *obj, const char *name, json_object *v)
{
	if (v == NULL)
		return -1;
	if (json_object_object_add(obj, name, v) != 0) {
		json_object_put(v);
		return -1;
	}
	return 0;
}

char *
jwt_sign(const unsigned char *key, size_t keylen, const char *sub,
    int64_t iat, int64_t exp)
{
	json_object	*payload = NULL;
	const char	*pjson;
	char		*tok = NULL;
	unsigned char	 mac[JWT_MAC_LEN];
	size_t		 sublen, hlen, plen, slen, toklen, off;

	/*
	 * Refuse what jwt_verify() would refuse anyway: an empty key (anyone
	 * could forge with it) and a subject it cannot carry back.
	 */
	if (key == NULL || keylen == 0 || sub == NULL)
		return NULL;
	sublen = strnlen(sub, JWT_SUB_MAX + 1);
	if (sublen == 0 || sublen > JWT_SUB_MAX)
		return NULL;

	if ((payload = json_object_new_object()) == NULL ||
	    jwt_add(payload, "sub", json_object_new_string_len(sub,
	    (int)sublen)) == -1 ||
	    jwt_add(payload, "iat", json_object_new_int64(iat)) == -1 ||
	    jwt_add(payload, "exp", json_object_new_int64(exp)) == -1)
		goto err;
	pjson = json_object_to_json_string_ext(payload,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	if (pjson == NULL)
		goto err;

	/* ENCODED_LEN counts the NUL; each part's NUL becomes a '.' or the end. */
	hlen = sodium_base64_ENCODED_LEN(sizeof(jwt_header) - 1,
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	plen = sodium_base64_ENCODED_LEN(strlen(pjson),
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	slen = sodium_base64_ENCODED_LEN(JWT_MAC_LEN,
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	toklen = hlen + plen + slen;
	if ((tok = malloc(toklen)) == NULL)
		goto err;

	sodium_bin2base64(tok, hlen, (const unsigned char *)jwt_header,
	    sizeof(jwt_header) - 1, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	off = strlen(tok);
	tok[off++] = '.';
	sodium_bin2base64(tok + off, plen, (const unsigned char *)pjson,
	    strlen(pjson), sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	off += strlen(tok + off);

	jwt_hmac(key, keylen, tok, off, mac);
	tok[off++] = '.';
	sodium_bin2base64(tok + off, toklen - off, mac, sizeof(mac),
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING);

	json_object_put(payload);
	return tok;
err:
	json_object_put(payload);
	free(tok);
	return NULL;
}

enum jwt_err
jwt_verify(const char *token, const unsigned char *const *keys,
    const size_t *keylens, size_t nkeys, int64_t now,
    struct jwt_claims *claims)
{
	/* Decoded parts are shorter than the token, so these always fit. */
	unsigned char	 buf[JWT_MAX_LEN + 1];
	unsigned char	 mac[JWT_MAC_LEN];
	struct jwt_claims c;
	json_object	*obj = NULL;
	const char	*d1, *d2;
	size_t		 len, i;
	long		 n;
	int		 good;
	enum jwt_err	 e;

	if (claims != NULL)
		memset(claims, 0, sizeof(*claims));
	if (token == NULL)
		return JWT_MALFORMED;
	/* Bound first: nothing past JWT_MAX_LEN bytes is ever read. */
	len = strnlen(token, JWT_MAX_LEN + 1);
	if (len == 0 || len > JWT_MAX_LEN)
		return JWT_MALFORMED;
	if ((d1 = memchr(token, '.', len)) == NULL ||
	    (d2 = memchr(d1 + 1, '.', len - (size_t)(d1 + 1 - token))) == NULL ||
	    memchr(d2 + 1, '.', len - (size_t)(d2 + 1 - token)) != NULL)
		return JWT_MALFORMED;

	/* 1. The header, and its algorithm, before anything else. */
	if ((n = jwt_b64_decode(token, (size_t)(d1 - token), buf,
	    sizeof(buf))) == -1)
		return JWT_MALFORMED;
	if ((obj = jwt_json_parse(buf, (size_t)n)) == NULL)
		return JWT_MALFORMED;
	e = jwt_check_header(obj);
	json_object_put(obj);
	obj = NULL;
	if (e != JWT_OK)
		return e;

	/* 2. The signature over "header.payload", with each key in turn. */
	n = jwt_b64_decode(d2 + 1, len - (size_t)(d2 + 1 - token), buf,
	    sizeof(buf));
	if (n == -1)
		return JWT_MALFORMED;
	if (n != JWT_MAC_LEN)
		return JWT_BAD_SIGNATURE;
	good = 0;
	for (i = 0; i < nkeys && !good; i++) {
		/* An empty secret would make every token forgeable. */
		if (keys == NULL || keylens == NULL || keys[i] == NULL ||
		    keylens[i] == 0)
			continue;
		jwt_hmac(keys[i], keylens[i], token, (size_t)(d2 - token), mac);
		good = sodium_memcmp(mac, buf, JWT_MAC_LEN) == 0;
	}
	sodium_memzero(mac, sizeof(mac));
	if (!good)
		return JWT_BAD_SIGNATURE;

	/*
	 * 3. Only now is the payload parsed: its bytes come from us, so the
	 * JSON parser never sees an unauthenticated body.
	 */
	if ((n = jwt_b64_decode(d1 + 1, (size_t)(d2 - d1 - 1), buf,
	    sizeof(buf))) == -1)
		return JWT_MALFORMED;
	if ((obj = jwt_json_parse(buf, (size_t)n)) == NULL)
		return JWT_MALFORMED;
	e = jwt_check_claims(obj, now, &c);
	json_object_put(obj);
	if (e == JWT_OK && claims != NULL)
		*claims = c;
	return e;
}

const char *
jwt_strerror(enum jwt_err e)
{
	switch (e) {
	case JWT_OK:
		return "valid token";
	case JWT_MALFORMED:
		return "malformed token";
	case JWT_BAD_ALG:
		return "unsupported token algorithm";
	case JWT_BAD_SIGNATURE:
		return "bad token signature";
	case JWT_EXPIRED:
		return "token expired";
	case JWT_NOT_YET_VALID:
		return "token not yet valid";
	case JWT_BAD_CLAIMS:
		return "missing or invalid token claims";
	}
	return "unknown token error";
}
