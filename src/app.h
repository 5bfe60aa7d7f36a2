/*
 * app.h — the one server context: configuration and signing keys, set up
 * once at start before any thread exists and read-only afterwards.
 */
#ifndef CDM_APP_H
#define CDM_APP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

#define APP_MAX_KEYS	9	/* the current secret and up to 8 previous */

struct app {
	struct config		 cfg;
	const unsigned char	*jwt_keys[APP_MAX_KEYS];
	size_t			 jwt_keylens[APP_MAX_KEYS];
	size_t			 n_jwt_keys;
	bool			 jwt_ephemeral;	/* no jwt_secret configured */
	int64_t			 started_ms;
};

extern struct app app;

/*
 * Take the signing keys from the configuration; without auth.jwt_secret a
 * random per-process key is used (tokens die with the process) and
 * jwt_ephemeral is set so the caller can complain loudly.
 */
void	app_keys_init(void);

#endif
