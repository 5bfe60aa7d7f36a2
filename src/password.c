/*
 * password.c — argon2id password hashes (libsodium crypto_pwhash_str) and
 * the per-username failed-login limiter. Each hash costs 64 MiB, so at most
 * PW_CONCURRENCY run at once whatever the number of worker threads. The
 * limiter lives in memory only: it does not survive a restart, is not shared
 * between processes, and does not look at client addresses.
 */
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include <sodium.h>

#include "password.h"

/*
 * Two 64 MiB hashes at a time: a burst of logins waits its turn instead of
 * pushing the server into swap or the OOM killer.
 */
#define PW_CONCURRENCY		2

#define THROTTLE_SLOTS		1024
#define THROTTLE_NAME_MAX	4096	/* bytes of a username ever read */
#define THROTTLE_KEY_LEN	16	/* BLAKE2b of the name */
#define THROTTLE_DEF_MAX	5
#define THROTTLE_DEF_LOCKOUT	900

static pthread_mutex_t	 pw_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t	 pw_cond = PTHREAD_COND_INITIALIZER;
static int		 pw_running;

/*
 * A slot remembers one username by a hash of it, so any name fits in a
 * fixed slot and two long names sharing a prefix do not share a counter.
 * first_fail opens the counting window; locked_until is set when the count
 * reaches the maximum.
 */
struct throttle_slot {
	unsigned char	 key[THROTTLE_KEY_LEN];
	int		 used;
	int		 failures;
	int64_t		 first_fail;
	int64_t		 last_fail;
	int64_t		 locked_until;
};

static pthread_mutex_t		 th_lock = PTHREAD_MUTEX_INITIALIZER;
static struct throttle_slot	 th_slots[THROTTLE_SLOTS];
static int			 th_max = THROTTLE_DEF_MAX;
static int			 th_lockout = THROTTLE_DEF_LOCKOUT;

static void
pw_slot_acquire(void)
{
	pthread_mutex_lock(&pw_lock);
	while (pw_running >= PW_CONCURRENCY)
		pthread_cond_wait(&pw_cond, &pw_lock);
	pw_running++;
	pthread_mutex_unlock(&pw_lock);
}

static void
pw_slot_release(void)
{
	pthread_mutex_lock(&pw_lock);
	pw_running--;
	pthread_cond_signal(&pw_cond);
	pthread_mutex_unlock(&pw_lock);
}

/* Length of password, or -1 when it is absent or longer than we accept. */
static long
pw_length(const char *password)
{
	size_t	 len;

	if (password == NULL)
		return -1;
	len = strnlen(password, PASSWORD_MAX_LEN + 1);
	if (len > PASSWORD_MAX_LEN)
		return -1;
	return (long)len;
}

int
password_hash(const char *password, char *out)
{
	long	 len;
	int	 rc;

	if (out == NULL || (len = pw_length(password)) == -1)
		return -1;
	/* Idempotent and thread-safe; picks the fastest argon2 code. */
	if (sodium_init() < 0)
		return -1;
	pw_slot_acquire();
	rc = crypto_pwhash_str_alg(out, password, (unsigned long long)len,
	    crypto_pwhash_OPSLIMIT_INTERACTIVE,
	    crypto_pwhash_MEMLIMIT_INTERACTIVE, crypto_pwhash_ALG_ARGON2ID13);
	pw_slot_release();
	return rc == 0 ? 0 : -1;
}

int
password_verify(const char *hash, const char *password)
{
	char	 buf[crypto_pwhash_STRBYTES];
	size_t	 hlen;
	long	 len;
	int	 rc;

	if (hash == NULL || (len = pw_length(password)) == -1)
		return 0;
	/*
	 * The stored string is copied into a buffer of the size libsodium
	 * expects, so a short or unterminated value is never over-read.
	 */
	hlen = strnlen(hash, sizeof(buf));
	if (hlen == 0 || hlen >= sizeof(buf))
		return 0;
	memset(buf, 0, sizeof(buf));
	memcpy(buf, hash, hlen);
	if (sodium_init() < 0)
		return 0;
	pw_slot_acquire();
	rc = crypto_pwhash_str_verify(buf, password, (unsigned long long)len);
	pw_slot_release();
	return rc == 0;
}

void
login_throttle_init(int max_failures, int lockout_seconds)
{
	pthread_mutex_lock(&th_lock);
	th_max = max_failures;
	th_lockout = lockout_seconds;
	memset(th_slots, 0, sizeof(th_slots));
	pthread_mutex_unlock(&th_lock);
}

/* The slot key for a name; an absent name is keyed as the empty one. */
static void
throttle_key(const char *username, unsigned char key[THROTTLE_KEY_LEN])
{
	size_t	 len = username ? strnlen(username, THROTTLE_NAME_MAX) : 0;

	/* No sodium_init() needed: BLAKE2b's portable code is the default. */
	crypto_generichash(key, THROTTLE_KEY_LEN,
	    (const unsigned char *)(username ? username : ""), len, NULL, 0);
}

/* A slot whose window and lock have both passed holds nothing useful. */
static int
throttle_stale(const struct throttle_slot *s, int64_t now)
{
	return now >= s->locked_until &&
	    now - s->first_fail >= (int64_t)th_lockout;
}

/* Caller holds th_lock. */
static struct throttle_slot *
throttle_find(const unsigned char key[THROTTLE_KEY_LEN])
{
	size_t	 i;

	for (i = 0; i < THROTTLE_SLOTS; i++)
		if (th_slots[i].used &&
		    memcmp(th_slots[i].key, key, THROTTLE_KEY_LEN) == 0)
			return &th_slots[i];
	return NULL;
}

/*
 * A slot for a new name. Caller holds th_lock. Prefer a free or stale slot,
 * then the oldest unlocked one, and only when every slot is locked the
 * oldest locked one: flooding the table with fresh names must not be a way
 * to unlock a name being guessed.
 */
static struct throttle_slot *
throttle_alloc(int64_t now)
{
	struct throttle_slot	*s, *old_open = NULL, *old_locked = NULL;
	size_t			 i;

	for (i = 0; i < THROTTLE_SLOTS; i++) {
		s = &th_slots[i];
		if (!s->used || throttle_stale(s, now))
			return s;
		if (now < s->locked_until) {
			if (old_locked == NULL ||
			    s->last_fail < old_locked->last_fail)
				old_locked = s;
		} else if (old_open == NULL ||
		    s->last_fail < old_open->last_fail)
			old_open = s;
	}
	return old_open != NULL ? old_open : old_locked;
}

int
login_throttle_check(const char *username, int64_t now)
{
	unsigned char		 key[THROTTLE_KEY_LEN];
	struct throttle_slot	*s;
	int64_t			 left = 0;

	throttle_key(username, key);
	pthread_mutex_lock(&th_lock);
	if (th_max > 0 && th_lockout > 0 && (s = throttle_find(key)) != NULL &&
	    now < s->locked_until)
		left = s->locked_until - now;
	pthread_mutex_unlock(&th_lock);
	return left > INT_MAX ? INT_MAX : (int)left;
}

void
login_throttle_fail(const char *username, int64_t now)
{
	unsigned char		 key[THROTTLE_KEY_LEN];
	struct throttle_slot	*s;

	throttle_key(username, key);
	pthread_mutex_lock(&th_lock);
	/* A zero maximum or lockout switches the limiter off. */
	if (th_max <= 0 || th_lockout <= 0)
		goto out;
	/* A new name, or one whose window has passed: count anew. */
	if ((s = throttle_find(key)) == NULL || throttle_stale(s, now)) {
		if (s == NULL)
			s = throttle_alloc(now);
		memset(s, 0, sizeof(*s));
		s->used = 1;
		memcpy(s->key, key, THROTTLE_KEY_LEN);
		s->first_fail = now;
	}
	if (s->failures < INT_MAX)
		s->failures++;
	s->last_fail = now;
	/*
	 * The lock runs from the failure that reached the maximum; failures
	 * that slip in while locked (requests already past the check) extend it.
	 */
	if (s->failures >= th_max)
		s->locked_until = now + th_lockout;
out:
	pthread_mutex_unlock(&th_lock);
}

void
login_throttle_success(const char *username)
{
	unsigned char		 key[THROTTLE_KEY_LEN];
	struct throttle_slot	*s;

	throttle_key(username, key);
	pthread_mutex_lock(&th_lock);
	if ((s = throttle_find(key)) != NULL)
		memset(s, 0, sizeof(*s));
	pthread_mutex_unlock(&th_lock);
}
