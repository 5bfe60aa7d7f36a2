/*
 * sandbox_setup.h — the parts of the server's sandbox client that hold no
 * state (src/sandbox_setup.c): where the helper, bwrap and the seccomp blob
 * are, what environment the helper gets, a SPAWN body, and the kept output.
 */
#ifndef CDM_SANDBOX_SETUP_H
#define CDM_SANDBOX_SETUP_H

#include <stddef.h>
#include <stdint.h>

#include "sandbox.h"

void		 sbx_helper_path(char *out, size_t len);
void		 sbx_bwrap_path(char *out, size_t len);
const char	*sbx_seccomp_mode(void);
void		 sbx_blob_path(char *out, size_t len, const char *mode);
/* NAME=VALUE strings (owned) for sandbox.env_passthrough, NULL-terminated. */
size_t		 sbx_passenv(char **v, size_t max);
/* The JSON body of a SPAWN request (owned); hold: keep the overlay mounted. */
char		*sbx_spawn_body(const char *lower, const char *upper,
		    const char *work, const char *merged, const char *const *argv,
		    const struct sandbox_env *env, size_t nenv, int net,
		    int hold, int timeout_ms);

/* Output kept: the first and the last half of the cap. */
struct capture {
	char	*head, *tail;
	size_t	 head_cap, head_len;
	size_t	 tail_cap, tail_len, tail_pos;	/* a ring */
	uint64_t total;
};

void	capture_add(struct capture *c, const char *p, size_t n);
/* The kept output into res (output, output_len, truncated). */
void	capture_finish(struct capture *c, struct sandbox_result *res);

#endif
