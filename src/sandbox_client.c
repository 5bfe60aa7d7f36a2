/*
 * sandbox_client.c — the server's side of the sandbox helper. Not built yet:
 * isolation is reported unavailable and nothing runs (fail closed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox.h"
#include "util.h"

int
sandbox_start(void)
{
	return -1;
}

void
sandbox_stop(void)
{
}

int
sandbox_available(char *reason, size_t len)
{
	snprintf(reason, len, "the sandbox helper is not part of this build; "
	    "execution tools are disabled");
	return 0;
}

int
sandbox_run(const struct sandbox_run *run, struct sandbox_result *res)
{
	memset(res, 0, sizeof(*res));
	sandbox_available(res->error, sizeof(res->error));
	return -1;
}

void
sandbox_result_free(struct sandbox_result *res)
{
	free(res->output);
	res->output = NULL;
}
