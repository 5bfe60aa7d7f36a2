/*
 * unit-password.c — argon2id hashing and verification, and the failed-login
 * limiter: lockout, release, windows, a full table, and hashing from several
 * threads at once. Hashes are real (64 MiB each), so the test keeps them few.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "password.h"
#include "tap.h"

#define T0	((int64_t)1700000000)
#define NTHREADS 4

static void
test_hash(void)
{
	char	 h1[crypto_pwhash_STRBYTES], h2[crypto_pwhash_STRBYTES];
	char	 bad[crypto_pwhash_STRBYTES];
	char	 pw[PASSWORD_MAX_LEN + 2];

	is_int(password_hash("correct horse", h1), 0, "hash");
	ok(strncmp(h1, "$argon2id$", 10) == 0, "argon2id: %s", h1);
	ok(strstr(h1, "m=65536,t=2,") != NULL,
	    "interactive limits (64 MiB, 2 passes)");
	is_int(password_verify(h1, "correct horse"), 1, "right password");
	is_int(password_verify(h1, "correct horsf"), 0, "wrong password");
	is_int(password_verify(h1, "correct horse "), 0, "extra byte");
	is_int(password_verify(h1, ""), 0, "empty password");
	is_int(password_verify(h1, NULL), 0, "NULL password");

	is_int(password_hash("correct horse", h2), 0, "hash again");
	ok(strcmp(h1, h2) != 0, "salted: two hashes differ");

	/* Malformed stored hashes are a "no", never a crash. */
	is_int(password_verify("", "x"), 0, "empty hash");
	is_int(password_verify(NULL, "x"), 0, "NULL hash");
	is_int(password_verify("plaintext", "plaintext"), 0,
	    "plaintext stored as hash");
	is_int(password_verify("$argon2id$v=19$m=65536,t=2,p=1$c2FsdA",
	    "correct horse"), 0, "hash without digest");
	memcpy(bad, h1, sizeof(bad));
	bad[strlen(bad) / 2] = '\0';
	is_int(password_verify(bad, "correct horse"), 0, "truncated hash");
	memcpy(bad, h1, sizeof(bad));
	bad[strlen(bad) - 2] = bad[strlen(bad) - 2] == 'A' ? 'B' : 'A';
	is_int(password_verify(bad, "correct horse"), 0, "altered digest");
	memset(bad, 'a', sizeof(bad));	/* unterminated within STRBYTES */
	is_int(password_verify(bad, "x"), 0, "hash with no terminator");

	/* Length bound. */
	memset(pw, 'p', sizeof(pw) - 1);
	pw[PASSWORD_MAX_LEN] = '\0';
	is_int(password_hash(pw, h2), 0, "PASSWORD_MAX_LEN bytes hashed");
	is_int(password_verify(h2, pw), 1, "PASSWORD_MAX_LEN bytes verify");
	pw[PASSWORD_MAX_LEN] = 'p';
	pw[PASSWORD_MAX_LEN + 1] = '\0';
	is_int(password_hash(pw, h2), -1, "over-long password refused");
	is_int(password_verify(h1, pw), 0, "over-long password never verifies");
	is_int(password_hash(NULL, h2), -1, "NULL password refused");
}

static void
test_throttle(void)
{
	char	 a[301], b[301];
	int	 i, left;

	login_throttle_init(3, 60);
	is_int(login_throttle_check("alice", T0), 0, "fresh name is free");
	login_throttle_fail("alice", T0);
	login_throttle_fail("alice", T0 + 1);
	is_int(login_throttle_check("alice", T0 + 2), 0, "below the maximum");
	login_throttle_fail("alice", T0 + 2);
	is_int(login_throttle_check("alice", T0 + 2), 60, "locked for 60 s");
	is_int(login_throttle_check("alice", T0 + 32), 30, "30 s left");
	is_int(login_throttle_check("bob", T0 + 32), 0, "other names free");
	is_int(login_throttle_check("Alice", T0 + 32), 0, "names are exact");
	is_int(login_throttle_check("alice", T0 + 62), 0, "lock expired");
	login_throttle_fail("alice", T0 + 63);
	is_int(login_throttle_check("alice", T0 + 63), 0,
	    "after the lock the count starts over");

	/* Success clears the name, also while locked. */
	for (i = 0; i < 3; i++)
		login_throttle_fail("carol", T0);
	ok(login_throttle_check("carol", T0) > 0, "carol locked");
	login_throttle_success("carol");
	is_int(login_throttle_check("carol", T0), 0, "success clears");
	login_throttle_fail("carol", T0);
	login_throttle_fail("carol", T0);
	is_int(login_throttle_check("carol", T0), 0, "count restarted");
	login_throttle_success("nobody");

	/* Failures spread wider than the window never lock. */
	login_throttle_fail("dave", T0);
	login_throttle_fail("dave", T0 + 30);
	login_throttle_fail("dave", T0 + 61);
	is_int(login_throttle_check("dave", T0 + 61), 0,
	    "window from the first failure has passed");
	login_throttle_fail("dave", T0 + 70);
	login_throttle_fail("dave", T0 + 80);
	is_int(login_throttle_check("dave", T0 + 80), 60,
	    "three in the new window lock");

	/* Long names differing only at the end are different names. */
	memset(a, 'n', sizeof(a) - 1);
	a[sizeof(a) - 1] = '\0';
	memcpy(b, a, sizeof(b));
	b[sizeof(b) - 2] = 'm';
	for (i = 0; i < 3; i++)
		login_throttle_fail(a, T0);
	ok(login_throttle_check(a, T0) > 0, "long name locked");
	is_int(login_throttle_check(b, T0), 0, "its near twin is not");
	login_throttle_fail(NULL, T0);
	is_int(login_throttle_check(NULL, T0), 0, "NULL name tolerated");

	/* Switched off. */
	login_throttle_init(0, 60);
	for (i = 0; i < 10; i++)
		login_throttle_fail("erin", T0);
	is_int(login_throttle_check("erin", T0), 0, "max 0: never locks");

	/* init() forgets everything. */
	login_throttle_init(3, 60);
	is_int(login_throttle_check("dave", T0 + 80), 0, "init clears");

	/*
	 * A full table: a flood of one-off names must not evict a locked
	 * name while unlocked ones can go instead.
	 */
	login_throttle_init(2, 1000);
	login_throttle_fail("victim", T0);
	login_throttle_fail("victim", T0);
	for (i = 0; i < 5000; i++) {
		char	 name[32];

		snprintf(name, sizeof(name), "flood-%d", i);
		login_throttle_fail(name, T0 + 1 + i / 100);
	}
	left = login_throttle_check("victim", T0 + 60);
	is_int(left, 940, "locked name survives a flood of new names");
	is_int(login_throttle_check("flood-4999", T0 + 60), 0,
	    "newest flood name counted, not locked");
	login_throttle_fail("flood-4999", T0 + 60);
	ok(login_throttle_check("flood-4999", T0 + 60) > 0,
	    "newest flood name still remembered");

	/* Every slot locked: the oldest lock goes, nothing crashes. */
	login_throttle_init(1, 100000);
	for (i = 0; i < 3000; i++) {
		char	 name[32];

		snprintf(name, sizeof(name), "lock-%d", i);
		login_throttle_fail(name, T0 + i);
	}
	ok(login_throttle_check("lock-2999", T0 + 3000) > 0,
	    "table of locked names: the newest is kept");
	is_int(login_throttle_check("lock-0", T0 + 3000), 0,
	    "table of locked names: the oldest was evicted");
}

struct worker {
	pthread_t	 th;
	char		 pw[32];
	char		 hash[crypto_pwhash_STRBYTES];
	int		 hashed, verified, rejected;
};

static void *
worker_run(void *arg)
{
	struct worker	*w = arg;

	w->hashed = password_hash(w->pw, w->hash) == 0;
	w->verified = password_verify(w->hash, w->pw);
	w->rejected = !password_verify(w->hash, "not it");
	return NULL;
}

static void
test_threads(void)
{
	struct worker	 w[NTHREADS];
	int		 i, good = 0, started = 0;

	memset(w, 0, sizeof(w));
	for (i = 0; i < NTHREADS; i++) {
		snprintf(w[i].pw, sizeof(w[i].pw), "thread secret %d", i);
		if (pthread_create(&w[i].th, NULL, worker_run, &w[i]) == 0)
			started++;
	}
	is_int(started, NTHREADS, "%d threads started", NTHREADS);
	for (i = 0; i < started; i++)
		pthread_join(w[i].th, NULL);
	for (i = 0; i < started; i++)
		good += w[i].hashed && w[i].verified && w[i].rejected;
	is_int(good, NTHREADS, "concurrent hash + verify in every thread");
	is_int(password_verify(w[0].hash, w[1].pw), 0,
	    "one thread's hash does not take another's password");
}

int
main(void)
{
	test_hash();
	test_throttle();
	test_threads();
	return done_testing();
}
