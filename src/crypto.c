/*
 * crypto.c — the sealing primitives of the stores at rest: key derivation
 * with a purpose label, XChaCha20-Poly1305 with a random nonce per value,
 * and a key id beside each ciphertext so the right key is picked without
 * trial decryption. It knows nothing about tables or users: callers give
 * it the owner, kind and name that the associated data binds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sodium.h>

#include "app.h"
#include "crypto.h"
#include "util.h"

#define LABEL_INPUT	"codumentor/secrets/input/v1"
#define LABEL_KEY	"codumentor/secrets/v1"
#define LABEL_KEY_ID	"codumentor/secrets/key-id/v1"
#define AD_PREFIX	"codumentor/sealed/v1"
#define NONCE_BYTES	crypto_aead_xchacha20poly1305_ietf_NPUBBYTES
#define TAG_BYTES	crypto_aead_xchacha20poly1305_ietf_ABYTES
#define AD_MAX		512	/* prefix, kind, owner id, name (<= 64) */

static struct crypto_keyring server_keyring;

/*
 * secret -> key: the secret, whatever its length, is first hashed to a
 * BLAKE2b key (a keyed hash takes at most 64 bytes of key), then keyed
 * BLAKE2b over a purpose label gives the encryption key. The JWT signer
 * uses the raw secret for HMAC; this key is never the same bytes.
 */
static void
derive(struct crypto_key *k, const char *secret)
{
	unsigned char	ikm[crypto_generichash_BYTES_MAX];
	unsigned char	id[8];

	crypto_generichash(ikm, sizeof(ikm), (const unsigned char *)secret,
	    strlen(secret), (const unsigned char *)LABEL_INPUT,
	    strlen(LABEL_INPUT));
	crypto_generichash(k->key, sizeof(k->key),
	    (const unsigned char *)LABEL_KEY, strlen(LABEL_KEY), ikm,
	    sizeof(ikm));
	/* The id is a keyed hash of the key: it names the key, reveals nothing. */
	crypto_generichash(id, sizeof(id), (const unsigned char *)LABEL_KEY_ID,
	    strlen(LABEL_KEY_ID), k->key, sizeof(k->key));
	sodium_bin2hex(k->id, sizeof(k->id), id, sizeof(id));
	sodium_memzero(ikm, sizeof(ikm));
}

static bool
keyring_has(const struct crypto_keyring *kr, const char *id)
{
	size_t i;

	for (i = 0; i < kr->n; i++)
		if (strcmp(kr->keys[i].id, id) == 0)
			return true;
	return false;
}

void
crypto_keyring_init(struct crypto_keyring *kr, const char *current,
    const char *const *previous, size_t nprevious)
{
	struct crypto_key	k;
	size_t			i;

	memset(kr, 0, sizeof(*kr));
	if (current != NULL && *current != '\0') {
		derive(&kr->keys[0], current);
		kr->n = 1;
		kr->has_current = true;
	}
	for (i = 0; i < nprevious && kr->n < CRYPTO_MAX_KEYS; i++) {
		if (previous[i] == NULL || *previous[i] == '\0')
			continue;
		derive(&k, previous[i]);
		if (!keyring_has(kr, k.id))
			kr->keys[kr->n++] = k;
	}
	sodium_memzero(&k, sizeof(k));
}

void
crypto_keyring_wipe(struct crypto_keyring *kr)
{
	sodium_memzero(kr, sizeof(*kr));
}

void
crypto_server_init(void)
{
	crypto_keyring_init(&server_keyring, app.cfg.auth.jwt_secret,
	    (const char *const *)app.cfg.auth.previous_jwt_secrets,
	    app.cfg.auth.n_previous_jwt_secrets);
}

const struct crypto_keyring *
crypto_server_keyring(void)
{
	return &server_keyring;
}

void
crypto_server_wipe(void)
{
	crypto_keyring_wipe(&server_keyring);
}

/*
 * The associated data: a label and the value's place, NUL-separated (none
 * of the parts can hold a NUL), so a ciphertext copied to another owner,
 * kind or name fails authentication.
 */
static int
make_ad(char *ad, size_t adlen, size_t *outlen, const char *kind,
    const char *owner, const char *name)
{
	int n;

	n = snprintf(ad, adlen, "%s%c%s%c%s%c%s", AD_PREFIX, 0, kind, 0, owner,
	    0, name);
	if (n < 0 || (size_t)n >= adlen)
		return -1;
	*outlen = (size_t)n;
	return 0;
}

int
crypto_seal(const struct crypto_keyring *kr, const char *kind,
    const char *owner, const char *name, const void *pt, size_t ptlen,
    struct sealed_buf *out)
{
	char			 ad[AD_MAX];
	size_t			 adlen;
	unsigned long long	 clen;

	memset(out, 0, sizeof(*out));
	if (!kr->has_current) {
		out->scheme = SEAL_PLAIN;
		out->data = xmalloc(ptlen + 1);
		memcpy(out->data, pt, ptlen);
		out->len = ptlen;
		return 0;
	}
	if (make_ad(ad, sizeof(ad), &adlen, kind, owner, name) == -1 ||
	    ptlen > SIZE_MAX - NONCE_BYTES - TAG_BYTES)
		return -1;
	out->scheme = SEAL_XCHACHA;
	strlcpy_(out->key_id, kr->keys[0].id, sizeof(out->key_id));
	out->data = xmalloc(NONCE_BYTES + ptlen + TAG_BYTES);
	randombytes_buf(out->data, NONCE_BYTES);
	crypto_aead_xchacha20poly1305_ietf_encrypt(out->data + NONCE_BYTES,
	    &clen, pt, ptlen, (const unsigned char *)ad, adlen, NULL, out->data,
	    kr->keys[0].key);
	out->len = NONCE_BYTES + (size_t)clen;
	return 0;
}

void
crypto_sealed_free(struct sealed_buf *b)
{
	if (b->data != NULL) {
		sodium_memzero(b->data, b->len);
		free(b->data);
	}
	memset(b, 0, sizeof(*b));
}

static char *
plain_copy(const unsigned char *p, size_t len)
{
	char *s = xmalloc(len + 1);

	memcpy(s, p, len);
	s[len] = '\0';
	return s;
}

int
crypto_open(const struct crypto_keyring *kr, const char *kind,
    const char *owner, const char *name, const struct sealed *in,
    char **pt, size_t *ptlen, enum seal_state *state, char *err, size_t errlen)
{
	const struct crypto_key	*k = NULL;
	char			 ad[AD_MAX];
	size_t			 adlen, i, mlen;
	unsigned long long	 got;
	unsigned char		*m;

	*pt = NULL;
	*ptlen = 0;
	if (in->scheme != NULL && strcmp(in->scheme, SEAL_PLAIN) == 0) {
		*pt = plain_copy(in->data, in->len);
		*ptlen = in->len;
		*state = kr->has_current ? SEAL_PLAINTEXT : SEAL_PLAIN_NO_KEY;
		return 0;
	}
	if (in->scheme == NULL || strcmp(in->scheme, SEAL_XCHACHA) != 0) {
		snprintf(err, errlen, "unknown storage scheme '%s'",
		    in->scheme ? in->scheme : "(none)");
		return -1;
	}
	for (i = 0; in->key_id != NULL && i < kr->n; i++)
		if (strcmp(kr->keys[i].id, in->key_id) == 0) {
			k = &kr->keys[i];
			break;
		}
	if (k == NULL) {
		snprintf(err, errlen, "it was sealed with key %.16s, which is "
		    "neither auth.jwt_secret nor one of "
		    "auth.previous_jwt_secrets",
		    in->key_id ? in->key_id : "(none)");
		return -1;
	}
	if (in->len < NONCE_BYTES + TAG_BYTES ||
	    make_ad(ad, sizeof(ad), &adlen, kind, owner, name) == -1) {
		snprintf(err, errlen, "the stored ciphertext is malformed");
		return -1;
	}
	mlen = in->len - NONCE_BYTES - TAG_BYTES;
	m = xmalloc(mlen + 1);
	if (crypto_aead_xchacha20poly1305_ietf_decrypt(m, &got, NULL,
	    in->data + NONCE_BYTES, in->len - NONCE_BYTES,
	    (const unsigned char *)ad, adlen, in->data, k->key) != 0) {
		free(m);
		snprintf(err, errlen, "the ciphertext does not authenticate "
		    "(altered, or copied from another user's or name's row)");
		return -1;
	}
	m[got] = '\0';
	*pt = (char *)m;
	*ptlen = (size_t)got;
	/* Without a current key an old value stays as it is: never downgrade. */
	*state = !kr->has_current || k == &kr->keys[0] ? SEAL_CURRENT :
	    SEAL_OLD_KEY;
	return 0;
}

void
crypto_plain_free(char *pt, size_t len)
{
	if (pt == NULL)
		return;
	sodium_memzero(pt, len);
	free(pt);
}
