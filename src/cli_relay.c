/*
 * cli_relay.c — `codumentor relay`. Not built yet: it says so and exits 2.
 */
#include <stdio.h>

#include "cli.h"

int
cmd_relay(int argc, char **argv)
{
	fprintf(stderr, "codumentor: '%s' is not available in this version\n",
	    argv[0]);
	return 2;
}
