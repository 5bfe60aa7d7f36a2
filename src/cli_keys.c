/*
 * cli_keys.c — `codumentor keys rotate`: seal every stored value under the
 * current auth.jwt_secret now, instead of on each value's next read, and
 * say what happened. A value no configured key opens is named and left as
 * it is; it never stops the others. Safe while the server runs: each
 * rewrite only replaces the exact value it read.
 */
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "cli.h"
#include "crypto.h"
#include "db.h"
#include "log.h"
#include "secrets.h"

static void
report_failed(const char *username, const char *kind, const char *name,
    const char *why, void *arg)
{
	fprintf(stderr, "codumentor: user %s: %s '%s' was not re-encrypted: "
	    "%s\n", username, kind, name, why);
	log_warn("keys rotate: user %s: %s '%s' was not re-encrypted: %s",
	    username, kind, name, why);
}

static int
keys_rotate(void)
{
	struct rotate_counts	c;

	if (app.cfg.auth.jwt_secret == NULL || *app.cfg.auth.jwt_secret == '\0') {
		fprintf(stderr, "codumentor: auth.jwt_secret is not set: there "
		    "is no key to encrypt with. Set it (or CODUMENTOR_JWT_SECRET),"
		    " list the old one in auth.previous_jwt_secrets, and run "
		    "this again.\n");
		return 1;
	}
	if (cli_open_storage(1) == -1)
		return 1;
	crypto_server_init();
	if (vault_rotate_all(&c, report_failed, NULL) == -1) {
		fprintf(stderr, "codumentor: the store could not be read\n");
		db_shutdown();
		return 1;
	}
	printf("re-encrypted: %zu\nalready current: %zu\n"
	    "plaintext encrypted: %zu\nfailed: %zu\n", c.resealed, c.current,
	    c.plaintext, c.failed);
	log_info("keys rotate: %zu re-encrypted, %zu already current, %zu "
	    "plaintext encrypted, %zu failed", c.resealed, c.current,
	    c.plaintext, c.failed);
	db_shutdown();
	log_close();
	crypto_server_wipe();
	return c.failed ? 1 : 0;
}

int
cmd_keys(int argc, char **argv)
{
	int rc;

	if (argc != 2 || strcmp(argv[1], "rotate") != 0) {
		fprintf(stderr, "usage: codumentor keys rotate\n");
		return 2;
	}
	cli_load_config();
	rc = keys_rotate();
	config_free(&app.cfg);
	return rc;
}
