/*
 * unit-jwt.c — jwt_sign()/jwt_verify() against the RFC 7515 example and a
 * catalogue of forged, damaged and out-of-date tokens. Tokens the server
 * would never issue are built here by hand (base64url + HMAC from libsodium),
 * so each case changes exactly one thing.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "jwt.h"
#include "tap.h"

#define NOW	((int64_t)1700000000)
#define B64	sodium_base64_VARIANT_URLSAFE_NO_PADDING

static const unsigned char key_cur[] = "current-secret-0123456789abcdef";
static const unsigned char key_old[] = "previous-secret-with-another-length";
static const char hdr_ok[] = "{\"alg\":\"HS256\",\"typ\":\"JWT\"}";

static char *
b64(const void *bin, size_t len)
{
	size_t	 n = sodium_base64_ENCODED_LEN(len, B64);
	char	*s = malloc(n);

	if (s == NULL)
		abort();
	sodium_bin2base64(s, n, bin, len, B64);
	return s;
}

/* "b64(hdr).b64(payload)" — hdr/payload are used verbatim when raw is set. */
static char *
signing_input(const char *hdr, const char *payload, int raw)
{
	char	*h, *p, *s;
	size_t	 n;

	h = raw ? strdup(hdr) : b64(hdr, strlen(hdr));
	p = raw ? strdup(payload) : b64(payload, strlen(payload));
	n = strlen(h) + strlen(p) + 2;
	if (h == NULL || p == NULL || (s = malloc(n)) == NULL)
		abort();
	snprintf(s, n, "%s.%s", h, p);
	free(h);
	free(p);
	return s;
}

static void
hmac(const unsigned char *key, size_t keylen, const char *msg,
    unsigned char mac[crypto_auth_hmacsha256_BYTES])
{
	crypto_auth_hmacsha256_state st;

	crypto_auth_hmacsha256_init(&st, key, keylen);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)msg,
	    strlen(msg));
	crypto_auth_hmacsha256_final(&st, mac);
}

/* A token over arbitrary header and payload text, signed with key. */
static char *
forge_raw(const char *hdr, const char *payload, int raw,
    const unsigned char *key, size_t keylen)
{
	unsigned char	 mac[crypto_auth_hmacsha256_BYTES];
	char		*in, *sig, *tok;
	size_t		 n;

	in = signing_input(hdr, payload, raw);
	hmac(key, keylen, in, mac);
	sig = b64(mac, sizeof(mac));
	n = strlen(in) + strlen(sig) + 2;
	if ((tok = malloc(n)) == NULL)
		abort();
	snprintf(tok, n, "%s.%s", in, sig);
	free(in);
	free(sig);
	return tok;
}

static char *
forge(const char *hdr, const char *payload)
{
	return forge_raw(hdr, payload, 0, key_cur, sizeof(key_cur) - 1);
}

static enum jwt_err
verify_keys(const char *tok, const unsigned char *const *keys,
    const size_t *lens, size_t n, struct jwt_claims *c)
{
	return jwt_verify(tok, keys, lens, n, NOW, c);
}

static enum jwt_err
verify(const char *tok)
{
	const unsigned char *keys[] = { key_cur };
	size_t		 lens[] = { sizeof(key_cur) - 1 };
	struct jwt_claims c;

	return verify_keys(tok, keys, lens, 1, &c);
}

/* Check, then free, a token built by forge(). */
static void
check(char *tok, enum jwt_err want, const char *what)
{
	enum jwt_err got = verify(tok);

	is_int(got, want, "%s: %s", what, jwt_strerror(got));
	free(tok);
}

static void
test_rfc7515(void)
{
	/* RFC 7515 appendix A.1: the JWS HMAC SHA-256 example. */
	static const char k64[] = "AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T"
	    "-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow";
	static const char tok[] = "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9"
	    ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGF"
	    "tcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
	    ".dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
	unsigned char	 key[64], mac[crypto_auth_hmacsha256_BYTES];
	unsigned char	 sig[crypto_auth_hmacsha256_BYTES];
	const unsigned char *keys[1];
	size_t		 keylen, siglen, lens[1];
	char		 in[sizeof(tok)];
	const char	*d2;
	struct jwt_claims c;

	is_int(sodium_base642bin(key, sizeof(key), k64, strlen(k64), NULL,
	    &keylen, NULL, B64), 0, "rfc7515: JWK k decodes");
	is_int(keylen, 64, "rfc7515: 64-byte key");
	d2 = strrchr(tok, '.');
	memcpy(in, tok, (size_t)(d2 - tok));
	in[d2 - tok] = '\0';
	hmac(key, keylen, in, mac);
	is_int(sodium_base642bin(sig, sizeof(sig), d2 + 1, strlen(d2 + 1),
	    NULL, &siglen, NULL, B64), 0, "rfc7515: signature decodes");
	ok(siglen == sizeof(mac) && memcmp(mac, sig, sizeof(mac)) == 0,
	    "rfc7515: recomputed HMAC equals the example signature");

	/*
	 * Its header has "typ" before "alg" and CRLF whitespace; its payload
	 * has no "sub". BAD_CLAIMS (not BAD_SIGNATURE) shows the header and
	 * the signature were accepted.
	 */
	keys[0] = key;
	lens[0] = keylen;
	is_int(verify_keys(tok, keys, lens, 1, &c), JWT_BAD_CLAIMS,
	    "rfc7515: signature accepted, claims refused (no sub)");
	key[0] ^= 1;
	is_int(verify_keys(tok, keys, lens, 1, &c), JWT_BAD_SIGNATURE,
	    "rfc7515: a one-bit different key is refused");
}

static void
test_roundtrip(void)
{
	const unsigned char *keys[] = { key_cur };
	size_t		 lens[] = { sizeof(key_cur) - 1 };
	struct jwt_claims c;
	char		*tok, sub[JWT_SUB_MAX + 2];

	tok = jwt_sign(key_cur, sizeof(key_cur) - 1, "u_abc/def", NOW - 10,
	    NOW + 3600);
	ok(tok != NULL, "sign: token issued");
	ok(tok != NULL && strlen(tok) <= JWT_MAX_LEN, "sign: within bound");
	ok(tok != NULL && strchr(tok, '=') == NULL && strchr(tok, '+') ==
	    NULL && strchr(tok, '/') == NULL, "sign: base64url, no padding");
	memset(&c, 0xff, sizeof(c));
	is_int(verify_keys(tok, keys, lens, 1, &c), JWT_OK, "round trip");
	is_str(c.sub, "u_abc/def", "round trip: sub");
	is_int(c.iat, NOW - 10, "round trip: iat");
	is_int(c.exp, NOW + 3600, "round trip: exp");
	is_int(c.nbf, 0, "round trip: nbf absent is 0");
	is_int(jwt_verify(tok, keys, lens, 1, NOW, NULL), JWT_OK,
	    "round trip: claims may be NULL");

	/* The header we issue is exactly the recommended one. */
	{
		char	*h = b64(hdr_ok, strlen(hdr_ok));

		ok(strncmp(tok, h, strlen(h)) == 0 && tok[strlen(h)] == '.',
		    "sign: header is {\"alg\":\"HS256\",\"typ\":\"JWT\"}");
		free(h);
	}
	free(tok);

	memset(sub, 'x', JWT_SUB_MAX);
	sub[JWT_SUB_MAX] = '\0';
	tok = jwt_sign(key_cur, sizeof(key_cur) - 1, sub, NOW, NOW + 60);
	is_int(verify_keys(tok, keys, lens, 1, &c), JWT_OK,
	    "sub of JWT_SUB_MAX chars round-trips");
	is_str(c.sub, sub, "long sub intact");
	free(tok);

	sub[JWT_SUB_MAX] = 'x';
	sub[JWT_SUB_MAX + 1] = '\0';
	ok(jwt_sign(key_cur, sizeof(key_cur) - 1, sub, NOW, NOW + 60) == NULL,
	    "sign refuses a sub longer than JWT_SUB_MAX");
	ok(jwt_sign(key_cur, sizeof(key_cur) - 1, "", NOW, NOW + 60) == NULL,
	    "sign refuses an empty sub");
	ok(jwt_sign(key_cur, 0, "u", NOW, NOW + 60) == NULL,
	    "sign refuses an empty key");
}

/* Replace part idx (0 header, 1 payload, 2 signature) of tok by repl. */
static char *
splice(const char *tok, int idx, const char *repl)
{
	const char	*d1 = strchr(tok, '.'), *d2 = strrchr(tok, '.');
	const char	*start, *end;
	char		*out;
	size_t		 n;

	start = idx == 0 ? tok : idx == 1 ? d1 + 1 : d2 + 1;
	end = idx == 0 ? d1 : idx == 1 ? d2 : tok + strlen(tok);
	n = strlen(tok) - (size_t)(end - start) + strlen(repl) + 1;
	if ((out = malloc(n)) == NULL)
		abort();
	snprintf(out, n, "%.*s%s%s", (int)(start - tok), tok, repl, end);
	return out;
}

static void
test_tampering(void)
{
	char	*tok, *p, *t;
	size_t	 i;

	tok = jwt_sign(key_cur, sizeof(key_cur) - 1, "alice", NOW, NOW + 600);

	/* Another user's payload under alice's signature. */
	p = b64("{\"sub\":\"admin\",\"iat\":1700000000,\"exp\":1700000600}",
	    strlen("{\"sub\":\"admin\",\"iat\":1700000000,\"exp\":1700000600}"));
	t = splice(tok, 1, p);
	check(t, JWT_BAD_SIGNATURE, "payload swapped");
	free(p);

	/* One character of the payload changed. */
	t = strdup(tok);
	p = strchr(t, '.') + 3;
	*p = *p == 'A' ? 'B' : 'A';
	check(t, JWT_BAD_SIGNATURE, "payload byte changed");

	/* First character of the signature changed (stays canonical). */
	t = strdup(tok);
	p = strrchr(t, '.') + 1;
	*p = *p == 'A' ? 'B' : 'A';
	check(t, JWT_BAD_SIGNATURE, "signature byte changed");

	/* Signature cut short, extended, or emptied. */
	t = strdup(tok);
	t[strlen(t) - 3] = '\0';	/* 40 chars: a canonical 30 bytes */
	check(t, JWT_BAD_SIGNATURE, "signature truncated");
	t = splice(tok, 2, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
	check(t, JWT_BAD_SIGNATURE, "signature too long");
	t = splice(tok, 2, "");
	check(t, JWT_BAD_SIGNATURE, "signature empty");

	/* Every single-character change to the signature is caught. */
	for (i = strlen(tok) - 1; tok[i] != '.'; i--) {
		t = strdup(tok);
		t[i] = t[i] == 'Q' ? 'g' : 'Q';
		if (verify(t) == JWT_OK)
			break;
		free(t);
		t = NULL;
	}
	ok(tok[i] == '.', "no altered signature character is accepted");
	free(t);

	/* An expired token with a bad signature: the signature speaks first. */
	t = forge_raw(hdr_ok, "{\"sub\":\"a\",\"iat\":1,\"exp\":2}", 0,
	    key_old, sizeof(key_old) - 1);
	check(t, JWT_BAD_SIGNATURE, "expired and wrongly signed");
	free(tok);
}

static void
test_algorithms(void)
{
	static const char pl[] =
	    "{\"sub\":\"alice\",\"iat\":1700000000,\"exp\":1700000600}";
	char	*t, *in, *n;

	check(forge(hdr_ok, pl), JWT_OK, "forged with the key: control");
	check(forge("{\"alg\":\"HS256\"}", pl), JWT_OK, "typ absent is fine");
	check(forge("{\"typ\":\"JWT\",\"alg\":\"HS256\",\"kid\":\"x\"}", pl),
	    JWT_OK, "member order and extra members are fine");

	/* "none", signed anyway and unsigned: refused before the signature. */
	check(forge("{\"alg\":\"none\",\"typ\":\"JWT\"}", pl), JWT_BAD_ALG,
	    "alg none with a signature");
	in = signing_input("{\"alg\":\"none\",\"typ\":\"JWT\"}", pl, 0);
	n = malloc(strlen(in) + 2);
	sprintf(n, "%s.", in);
	check(n, JWT_BAD_ALG, "alg none, empty signature");
	check(in, JWT_MALFORMED, "alg none, no signature part");

	check(forge("{\"alg\":\"None\"}", pl), JWT_BAD_ALG, "alg None");
	check(forge("{\"alg\":\"HS512\",\"typ\":\"JWT\"}", pl), JWT_BAD_ALG,
	    "alg HS512");
	check(forge("{\"alg\":\"RS256\",\"typ\":\"JWT\"}", pl), JWT_BAD_ALG,
	    "alg RS256");
	check(forge("{\"alg\":\"hs256\"}", pl), JWT_BAD_ALG, "alg hs256");
	check(forge("{\"alg\":\"HS256 \"}", pl), JWT_BAD_ALG, "alg HS256+space");
	check(forge("{\"alg\":\"HS256\\u0000\"}", pl), JWT_BAD_ALG,
	    "alg HS256 with an embedded NUL");
	check(forge("{\"typ\":\"JWT\"}", pl), JWT_BAD_ALG, "alg missing");
	check(forge("{\"alg\":null}", pl), JWT_BAD_ALG, "alg null");
	check(forge("{\"alg\":[\"HS256\"]}", pl), JWT_BAD_ALG, "alg array");
	check(forge("{\"alg\":\"HS256\",\"typ\":\"JWS\"}", pl), JWT_BAD_ALG,
	    "typ JWS");
	check(forge("{\"alg\":\"HS256\",\"typ\":1}", pl), JWT_BAD_ALG,
	    "typ not a string");
	/* json-c keeps the last duplicate; whichever it keeps is checked. */
	check(forge("{\"alg\":\"HS256\",\"alg\":\"none\"}", pl), JWT_BAD_ALG,
	    "duplicate alg ending in none");

	check(forge("[\"HS256\"]", pl), JWT_MALFORMED, "header an array");
	check(forge("\"HS256\"", pl), JWT_MALFORMED, "header a string");
	check(forge("not json", pl), JWT_MALFORMED, "header not JSON");
	check(forge("{\"alg\":\"HS256\"}x", pl), JWT_MALFORMED,
	    "header with trailing bytes");
	check(forge("{'alg':'HS256'}", pl), JWT_MALFORMED,
	    "header in lenient JSON");
	check(forge("", pl), JWT_MALFORMED, "header empty");
	check(forge("{\"alg\":\"HS256\",\"x\":[[[[[[[[1]]]]]]]]}", pl),
	    JWT_MALFORMED, "header nested too deep");

	/* A header whose JSON is fine but whose bytes are not base64url. */
	t = forge_raw("eyJhbGciOiJIUzI1NiJ9*", "eyJ9", 1, key_cur,
	    sizeof(key_cur) - 1);
	check(t, JWT_MALFORMED, "header not base64url");
}

static void
test_structure(void)
{
	char	*tok, *t, *p;
	char	 big[JWT_MAX_LEN + 2];
	size_t	 n;

	tok = jwt_sign(key_cur, sizeof(key_cur) - 1, "alice", NOW, NOW + 600);

	is_int(verify(""), JWT_MALFORMED, "empty token");
	is_int(jwt_verify(NULL, NULL, NULL, 0, NOW, NULL), JWT_MALFORMED,
	    "NULL token");
	is_int(verify("abc"), JWT_MALFORMED, "no dot");
	is_int(verify(".."), JWT_MALFORMED, "only dots");

	p = strchr(tok, '.');
	check(strdup(p), JWT_MALFORMED, "header part missing");
	t = strdup(tok);
	*strrchr(t, '.') = '\0';
	check(t, JWT_MALFORMED, "one dot");
	n = strlen(tok) + 6;
	t = malloc(n);
	snprintf(t, n, "%s.AAAA", tok);
	check(t, JWT_MALFORMED, "three dots");
	n = strlen(tok) + 2;
	t = malloc(n);
	snprintf(t, n, "%s.", tok);
	check(t, JWT_MALFORMED, "three dots, trailing");

	/* Alphabet, padding and non-canonical trailing bits. */
	t = strdup(tok);
	t[2] = '+';
	check(t, JWT_MALFORMED, "'+' in header");
	n = strlen(tok) + 2;
	t = malloc(n);
	snprintf(t, n, "%s=", tok);
	check(t, JWT_MALFORMED, "padding on signature");
	p = b64("{\"alg\":\"HS256\"}", strlen("{\"alg\":\"HS256\"}"));
	t = forge_raw(p, "eyJ!", 1, key_cur, sizeof(key_cur) - 1);
	check(t, JWT_MALFORMED, "payload not base64url (signed anyway)");
	t = forge_raw(p, "e", 1, key_cur, sizeof(key_cur) - 1);
	check(t, JWT_MALFORMED, "payload of impossible length");
	free(p);
	t = strdup(tok);
	p = t + strlen(t) - 1;
	/* 43 chars carry 258 bits; the last 2 must be zero for 32 bytes. */
	*p = *p == 'B' ? 'C' : 'B';
	check(t, JWT_MALFORMED, "signature with non-zero trailing bits");
	free(tok);

	/* Payload that is not an object, signed with the right key. */
	check(forge(hdr_ok, "[1,2]"), JWT_MALFORMED, "payload an array");
	check(forge(hdr_ok, "{\"sub\":"), JWT_MALFORMED, "payload cut JSON");

	/* Over-long: refused by length alone, even if it were well formed. */
	memset(big, 'A', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	big[10] = big[20] = '.';
	is_int(verify(big), JWT_MALFORMED, "JWT_MAX_LEN + 1 bytes");
	{
		char	 pl[JWT_MAX_LEN];

		snprintf(pl, sizeof(pl), "{\"sub\":\"a\",\"iat\":%lld,"
		    "\"exp\":%lld,\"pad\":\"%*s\"}", (long long)NOW,
		    (long long)NOW + 60, 3000, "");
		t = forge(hdr_ok, pl);
		ok(strlen(t) > JWT_MAX_LEN, "padded token is long (%zu)",
		    strlen(t));
		check(t, JWT_MALFORMED, "well-signed but over-long token");
		snprintf(pl, sizeof(pl), "{\"sub\":\"a\",\"iat\":%lld,"
		    "\"exp\":%lld,\"pad\":\"%*s\"}", (long long)NOW,
		    (long long)NOW + 60, 2800, "");
		t = forge(hdr_ok, pl);
		ok(strlen(t) <= JWT_MAX_LEN, "padded token fits (%zu)",
		    strlen(t));
		check(t, JWT_OK, "well-signed token just under the bound");
	}
}

static void
test_keys(void)
{
	const unsigned char *both[] = { key_cur, key_old };
	size_t		 both_lens[] = { sizeof(key_cur) - 1,
			    sizeof(key_old) - 1 };
	const unsigned char *empty[] = { (const unsigned char *)"" };
	size_t		 empty_lens[] = { 0 };
	struct jwt_claims c;
	char		*tok;

	tok = jwt_sign(key_old, sizeof(key_old) - 1, "bob", NOW, NOW + 600);
	is_int(verify(tok), JWT_BAD_SIGNATURE, "wrong key");
	is_int(verify_keys(tok, both, both_lens, 2, &c), JWT_OK,
	    "previous key accepted");
	is_str(c.sub, "bob", "previous key: sub");
	is_int(verify_keys(tok, both, both_lens, 0, &c), JWT_BAD_SIGNATURE,
	    "no keys: refused");
	free(tok);

	tok = jwt_sign(key_cur, sizeof(key_cur) - 1, "bob", NOW, NOW + 600);
	is_int(verify_keys(tok, both, both_lens, 2, &c), JWT_OK,
	    "current key accepted with previous configured");
	free(tok);

	/* A token made with an empty secret must not pass an empty secret. */
	tok = forge_raw(hdr_ok, "{\"sub\":\"a\",\"iat\":1700000000,"
	    "\"exp\":1700000600}", 0, (const unsigned char *)"", 0);
	is_int(verify_keys(tok, empty, empty_lens, 1, &c), JWT_BAD_SIGNATURE,
	    "empty key never verifies");
	free(tok);
}

static void
test_claims(void)
{
	char	 pl[256];
	char	 sub[JWT_SUB_MAX + 2];

#define PL(...)	(snprintf(pl, sizeof(pl), __VA_ARGS__), pl)
	check(forge(hdr_ok, PL("{\"iat\":%lld,\"exp\":%lld}", (long long)NOW,
	    (long long)NOW + 60)), JWT_BAD_CLAIMS, "sub missing");
	check(forge(hdr_ok, PL("{\"sub\":42,\"iat\":%lld,\"exp\":%lld}",
	    (long long)NOW, (long long)NOW + 60)), JWT_BAD_CLAIMS,
	    "sub a number");
	check(forge(hdr_ok, PL("{\"sub\":null,\"iat\":%lld,\"exp\":%lld}",
	    (long long)NOW, (long long)NOW + 60)), JWT_BAD_CLAIMS, "sub null");
	check(forge(hdr_ok, PL("{\"sub\":\"\",\"iat\":%lld,\"exp\":%lld}",
	    (long long)NOW, (long long)NOW + 60)), JWT_BAD_CLAIMS, "sub empty");
	check(forge(hdr_ok, PL("{\"sub\":\"a\\u0000b\",\"iat\":%lld,"
	    "\"exp\":%lld}", (long long)NOW, (long long)NOW + 60)),
	    JWT_BAD_CLAIMS, "sub with an embedded NUL");
	memset(sub, 'y', JWT_SUB_MAX + 1);
	sub[JWT_SUB_MAX + 1] = '\0';
	check(forge(hdr_ok, PL("{\"sub\":\"%s\",\"iat\":%lld,\"exp\":%lld}",
	    sub, (long long)NOW, (long long)NOW + 60)), JWT_BAD_CLAIMS,
	    "sub too long");
	sub[JWT_SUB_MAX] = '\0';
	check(forge(hdr_ok, PL("{\"sub\":\"%s\",\"iat\":%lld,\"exp\":%lld}",
	    sub, (long long)NOW, (long long)NOW + 60)), JWT_OK,
	    "sub exactly JWT_SUB_MAX");

	check(forge(hdr_ok, PL("{\"sub\":\"a\",\"exp\":%lld}",
	    (long long)NOW + 60)), JWT_BAD_CLAIMS, "iat missing");
	check(forge(hdr_ok, PL("{\"sub\":\"a\",\"iat\":%lld}",
	    (long long)NOW)), JWT_BAD_CLAIMS, "exp missing");
	check(forge(hdr_ok, PL("{\"sub\":\"a\",\"iat\":%lld,\"exp\":\"%lld\"}",
	    (long long)NOW, (long long)NOW + 60)), JWT_BAD_CLAIMS,
	    "exp a string");
	check(forge(hdr_ok, PL("{\"sub\":\"a\",\"iat\":%lld.5,\"exp\":%lld}",
	    (long long)NOW, (long long)NOW + 60)), JWT_BAD_CLAIMS,
	    "iat a fraction");
	check(forge(hdr_ok, PL("{\"sub\":\"a\",\"iat\":true,\"exp\":%lld}",
	    (long long)NOW + 60)), JWT_BAD_CLAIMS, "iat a boolean");
	check(forge(hdr_ok, PL("{\"sub\":\"a\",\"iat\":-5,\"exp\":%lld}",
	    (long long)NOW + 60)), JWT_BAD_CLAIMS, "iat negative");
	check(forge(hdr_ok, PL("{\"sub\":\"a\",\"iat\":%lld,\"exp\":%lld,"
	    "\"nbf\":\"0\"}", (long long)NOW, (long long)NOW + 60)),
	    JWT_BAD_CLAIMS, "nbf a string");

	/* Time. */
	check(forge(hdr_ok, PL("{\"sub\":\"a\",\"iat\":%lld,\"exp\":%lld}",
	    (long long)NOW - 100, (long long)NOW - 1)), JWT_EXPIRED, "expired");
	check(forge(hdr_ok, PL("{\"sub\":\"a\",\"iat\":%lld,\"exp\":%lld}",
	    (long long)NOW - 100, (long long)NOW)), JWT_EXPIRED, "exp == now");
	check(forge(hdr_ok, PL("{\"sub\":\"a\",\"iat\":%lld,\"exp\":%lld}",
	    (long long)NOW - 100, (long long)NOW + 1)), JWT_OK, "exp == now+1");
	check(forge(hdr_ok, PL("{\"sub\":\"a\",\"iat\":%lld,\"exp\":%lld,"
	    "\"nbf\":%lld}", (long long)NOW, (long long)NOW + 600,
	    (long long)NOW + 61)), JWT_NOT_YET_VALID, "nbf in the future");
	check(forge(hdr_ok, PL("{\"sub\":\"a\",\"iat\":%lld,\"exp\":%lld,"
	    "\"nbf\":%lld}", (long long)NOW, (long long)NOW + 600,
	    (long long)NOW + 60)), JWT_OK, "nbf within the leeway");
	check(forge(hdr_ok, PL("{\"sub\":\"a\",\"iat\":%lld,\"exp\":%lld}",
	    (long long)NOW + 3600, (long long)NOW + 7200)), JWT_NOT_YET_VALID,
	    "iat far in the future");
	check(forge(hdr_ok, PL("{\"sub\":\"a\",\"iat\":%lld,\"exp\":%lld}",
	    (long long)NOW + 30, (long long)NOW + 7200)), JWT_OK,
	    "iat within the leeway");
	check(forge(hdr_ok, PL("{\"sub\":\"a\",\"iat\":%lld,"
	    "\"exp\":99999999999999999999}", (long long)NOW)), JWT_OK,
	    "huge exp saturates and does not crash");
#undef PL
}

static void
test_strerror(void)
{
	int	 e, distinct = 1;

	for (e = JWT_OK; e <= JWT_BAD_CLAIMS; e++) {
		const char *s = jwt_strerror((enum jwt_err)e);

		if (s == NULL || *s == '\0' ||
		    (e > JWT_OK && strcmp(s, jwt_strerror((enum jwt_err)(e -
		    1))) == 0))
			distinct = 0;
	}
	ok(distinct, "jwt_strerror: a distinct phrase per error");
	ok(jwt_strerror((enum jwt_err)99) != NULL, "jwt_strerror: unknown");
}

int
main(void)
{
	if (sodium_init() < 0)
		return 1;
	test_rfc7515();
	test_roundtrip();
	test_tampering();
	test_algorithms();
	test_structure();
	test_keys();
	test_claims();
	test_strerror();
	return done_testing();
}
