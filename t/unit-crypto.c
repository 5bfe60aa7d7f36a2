/*
 * unit-crypto.c — sealing at rest (src/crypto.c) and redaction
 * (redact_values in src/secrets.c): round trips, key ids, rotation states,
 * associated data binding, tampering, and the redaction rules.
 */
#include <stdlib.h>
#include <string.h>
#include <sodium.h>

#include "crypto.h"
#include "secrets.h"
#include "tap.h"

static int
open_value(const struct crypto_keyring *kr, const char *kind,
    const char *owner, const char *name, const struct sealed_buf *b,
    char **pt, size_t *len, enum seal_state *st, char *err, size_t errlen)
{
	struct sealed in = {
		.scheme = b->scheme,
		.key_id = b->key_id[0] ? b->key_id : NULL,
		.data = b->data,
		.len = b->len,
	};

	return crypto_open(kr, kind, owner, name, &in, pt, len, st, err, errlen);
}

static void
test_seal(void)
{
	struct crypto_keyring	 a, b, ab, none;
	const char		*prev_a[] = { "secret-A-0123456789" };
	struct sealed_buf	 s, s2;
	enum seal_state		 st;
	char			*pt, err[256];
	size_t			 len;
	const char		*value = "hunter2-is-not-a-good-password";

	crypto_keyring_init(&a, "secret-A-0123456789", NULL, 0);
	crypto_keyring_init(&b, "secret-B-0123456789", NULL, 0);
	crypto_keyring_init(&ab, "secret-B-0123456789", prev_a, 1);
	crypto_keyring_init(&none, "", NULL, 0);

	is_int(strlen(a.keys[0].id), CRYPTO_KEY_ID_LEN, "key id is 16 hex");
	ok(strcmp(a.keys[0].id, b.keys[0].id) != 0, "different secrets, "
	    "different key ids");
	ok(memcmp(a.keys[0].key, "secret-A-0123456789", 19) != 0,
	    "the key is not the raw secret");
	is_int(ab.n, 2, "current + previous");

	ok(crypto_seal(&a, "secret", "user1", "TOKEN", value, strlen(value),
	    &s) == 0, "seal");
	is_str(s.scheme, SEAL_XCHACHA, "sealed scheme");
	is_str(s.key_id, a.keys[0].id, "key id stored");
	ok(memmem(s.data, s.len, value, strlen(value)) == NULL,
	    "ciphertext does not contain the value");
	is_int(s.len, strlen(value) + 24 + 16, "nonce + ciphertext + tag");

	crypto_seal(&a, "secret", "user1", "TOKEN", value, strlen(value), &s2);
	ok(memcmp(s.data, s2.data, 24) != 0, "a fresh nonce per value");
	crypto_sealed_free(&s2);

	ok(open_value(&a, "secret", "user1", "TOKEN", &s, &pt, &len, &st, err,
	    sizeof(err)) == 0 && strcmp(pt, value) == 0 && st == SEAL_CURRENT,
	    "open with the current key");
	crypto_plain_free(pt, len);

	ok(open_value(&ab, "secret", "user1", "TOKEN", &s, &pt, &len, &st, err,
	    sizeof(err)) == 0 && strcmp(pt, value) == 0 && st == SEAL_OLD_KEY,
	    "open with a previous key: state says reseal");
	crypto_plain_free(pt, len);

	ok(open_value(&b, "secret", "user1", "TOKEN", &s, &pt, &len, &st, err,
	    sizeof(err)) == -1 && pt == NULL, "unknown key id: refused");
	ok(strstr(err, s.key_id) != NULL && strstr(err, value) == NULL,
	    "the error names the key id, not the value: %s", err);

	ok(open_value(&a, "secret", "user2", "TOKEN", &s, &pt, &len, &st, err,
	    sizeof(err)) == -1, "another owner: does not authenticate");
	ok(strstr(err, "authenticate") != NULL, "error says so: %s", err);
	ok(open_value(&a, "secret", "user1", "OTHER", &s, &pt, &len, &st, err,
	    sizeof(err)) == -1, "another name: does not authenticate");
	ok(open_value(&a, "profile", "user1", "TOKEN", &s, &pt, &len, &st, err,
	    sizeof(err)) == -1, "another kind: does not authenticate");

	s.data[s.len - 1] ^= 1;
	ok(open_value(&a, "secret", "user1", "TOKEN", &s, &pt, &len, &st, err,
	    sizeof(err)) == -1, "a flipped bit: does not authenticate");
	s.len = 10;
	ok(open_value(&a, "secret", "user1", "TOKEN", &s, &pt, &len, &st, err,
	    sizeof(err)) == -1, "truncated: malformed");
	crypto_sealed_free(&s);

	/* No key: plaintext, marked; a later key reseals it. */
	ok(crypto_seal(&none, "secret", "u", "N", "plainvalue", 10, &s) == 0,
	    "seal without a key");
	is_str(s.scheme, SEAL_PLAIN, "stored as plain");
	is_str(s.key_id, "", "no key id");
	ok(open_value(&none, "secret", "u", "N", &s, &pt, &len, &st, err,
	    sizeof(err)) == 0 && st == SEAL_PLAIN_NO_KEY, "plain, no key");
	crypto_plain_free(pt, len);
	ok(open_value(&a, "secret", "u", "N", &s, &pt, &len, &st, err,
	    sizeof(err)) == 0 && st == SEAL_PLAINTEXT && strcmp(pt,
	    "plainvalue") == 0, "plain, a key now exists: seal it");
	crypto_plain_free(pt, len);
	crypto_sealed_free(&s);

	/* Only previous keys: old values open and are left alone. */
	crypto_keyring_init(&none, NULL, prev_a, 1);
	crypto_seal(&a, "secret", "u", "N", "abcdefgh", 8, &s);
	ok(open_value(&none, "secret", "u", "N", &s, &pt, &len, &st, err,
	    sizeof(err)) == 0 && st == SEAL_CURRENT,
	    "no current key: an old value is not downgraded");
	crypto_plain_free(pt, len);
	crypto_sealed_free(&s);

	crypto_keyring_wipe(&a);
	crypto_keyring_wipe(&b);
	crypto_keyring_wipe(&ab);
	crypto_keyring_wipe(&none);
}

static void
redact_is(const struct secret_value *v, size_t n, const char *in,
    const char *want, size_t want_hits, const char *name)
{
	char	*t = strdup(in);
	size_t	 len = strlen(in), hits;

	hits = redact_values(v, n, &t, &len);
	is_str(t, want, "%s", name);
	is_int(hits, want_hits, "%s: replacements", name);
	is_int(len, strlen(want), "%s: length", name);
	free(t);
}

static void
test_redact(void)
{
	struct secret_value v[] = {
		{ "SHORT", "abcdefgh", 8 },
		{ "LONG", "abcdefgh-ijkl", 13 },
		{ "TINY", "abc", 3 },
	};

	redact_is(v, 3, "x abcdefgh-ijkl y abcdefgh z",
	    "x [secret:LONG] y [secret:SHORT] z", 2, "longest first");
	redact_is(v, 3, "abc abc", "abc abc", 0, "below the minimum: kept");
	redact_is(v, 3, "abcdefghabcdefgh", "[secret:SHORT][secret:SHORT]", 2,
	    "adjacent occurrences");
	redact_is(v, 3, "abcdefg", "abcdefg", 0, "a prefix is not a match");
	redact_is(v, 0, "abcdefgh", "abcdefgh", 0, "no secrets");
	redact_is(v, 3, "", "", 0, "empty text");
}

int
main(void)
{
	if (sodium_init() < 0)
		return 1;
	test_seal();
	test_redact();
	return done_testing();
}
