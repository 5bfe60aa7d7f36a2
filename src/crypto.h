/*
 * crypto.h — sealing values at rest: a keyring derived from auth.jwt_secret
 * (and auth.previous_jwt_secrets), XChaCha20-Poly1305 with a random nonce per
 * value, a key id stored beside each ciphertext, and associated data that
 * binds a value to its owner, kind and name. doc/security.md "Data at rest".
 */
#ifndef CDM_CRYPTO_H
#define CDM_CRYPTO_H

#include <stdbool.h>
#include <stddef.h>

#define CRYPTO_KEY_BYTES	32
#define CRYPTO_KEY_ID_LEN	16	/* hex characters: 8 bytes */
#define CRYPTO_MAX_KEYS		17	/* the current secret and 16 previous */

/* The scheme column of a sealed row. */
#define SEAL_PLAIN		"plain"
#define SEAL_XCHACHA		"xchacha20poly1305"

struct crypto_key {
	unsigned char	 key[CRYPTO_KEY_BYTES];
	char		 id[CRYPTO_KEY_ID_LEN + 1];
};

/*
 * keys[0] is the current key when has_current; the rest only open old
 * values. Without a current key new values are stored in plaintext.
 */
struct crypto_keyring {
	struct crypto_key	keys[CRYPTO_MAX_KEYS];
	size_t			n;
	bool			has_current;
};

/* A value as a row holds it. */
struct sealed {
	const char		*scheme;	/* SEAL_PLAIN or SEAL_XCHACHA */
	const char		*key_id;	/* NULL for plaintext */
	const unsigned char	*data;		/* nonce || ciphertext || tag */
	size_t			 len;
};

/* What crypto_seal produces; free with crypto_sealed_free. */
struct sealed_buf {
	const char	*scheme;
	char		 key_id[CRYPTO_KEY_ID_LEN + 1];	/* "" for plaintext */
	unsigned char	*data;
	size_t		 len;
};

/* What crypto_open found out about a value it opened. */
enum seal_state {
	SEAL_CURRENT,		/* as it should be (or no current key to reseal with) */
	SEAL_OLD_KEY,		/* opened with a previous key: reseal */
	SEAL_PLAINTEXT,		/* stored in plaintext while a key exists: seal */
	SEAL_PLAIN_NO_KEY,	/* plaintext, and no key to seal it with */
};

/*
 * Build a keyring: current may be NULL or "" (no encryption); previous
 * secrets that are empty or equal to the current one are skipped.
 */
void	crypto_keyring_init(struct crypto_keyring *kr, const char *current,
	    const char *const *previous, size_t nprevious);
void	crypto_keyring_wipe(struct crypto_keyring *kr);

/* The server's keyring, built from app.cfg once before threads start. */
void	crypto_server_init(void);
const struct crypto_keyring *crypto_server_keyring(void);
void	crypto_server_wipe(void);

/*
 * Seal PT under the current key (plaintext when there is none), bound to
 * kind/owner/name. 0 / -1.
 */
int	crypto_seal(const struct crypto_keyring *kr, const char *kind,
	    const char *owner, const char *name, const void *pt, size_t ptlen,
	    struct sealed_buf *out);
void	crypto_sealed_free(struct sealed_buf *b);

/*
 * Open a stored value. 0 with *pt allocated and NUL-terminated (free with
 * crypto_plain_free) and *state set; -1 with a sentence in err that never
 * contains the value or a key.
 */
int	crypto_open(const struct crypto_keyring *kr, const char *kind,
	    const char *owner, const char *name, const struct sealed *in,
	    char **pt, size_t *ptlen, enum seal_state *state,
	    char *err, size_t errlen);
void	crypto_plain_free(char *pt, size_t len);

#endif
