/*
 * app.c — the server context. Keys point into the configuration strings, so
 * they live exactly as long as the configuration does.
 */
#include <string.h>
#include <sodium.h>

#include "app.h"

struct app app;

static unsigned char ephemeral_key[32];

void
app_keys_init(void)
{
	size_t i;

	app.n_jwt_keys = 0;
	app.jwt_ephemeral = false;
	if (app.cfg.auth.jwt_secret == NULL || app.cfg.auth.jwt_secret[0] == '\0') {
		randombytes_buf(ephemeral_key, sizeof(ephemeral_key));
		app.jwt_keys[0] = ephemeral_key;
		app.jwt_keylens[0] = sizeof(ephemeral_key);
		app.n_jwt_keys = 1;
		app.jwt_ephemeral = true;
	} else {
		app.jwt_keys[0] = (const unsigned char *)app.cfg.auth.jwt_secret;
		app.jwt_keylens[0] = strlen(app.cfg.auth.jwt_secret);
		app.n_jwt_keys = 1;
	}
	/* Tokens signed before a rotation stay valid until they expire. */
	for (i = 0; i < app.cfg.auth.n_previous_jwt_secrets &&
	    app.n_jwt_keys < APP_MAX_KEYS; i++) {
		const char *k = app.cfg.auth.previous_jwt_secrets[i];

		if (k == NULL || *k == '\0')
			continue;
		app.jwt_keys[app.n_jwt_keys] = (const unsigned char *)k;
		app.jwt_keylens[app.n_jwt_keys] = strlen(k);
		app.n_jwt_keys++;
	}
}
