/*
 * cli_sandbox.c — `codumentor sandbox run` and `codumentor gc-workspaces`.
 * Not built yet: they say so and exit 2.
 */
#include <stdio.h>

#include "cli.h"

int
cmd_sandbox(int argc, char **argv)
{
	fprintf(stderr, "codumentor: '%s' is not available in this version\n",
	    argv[0]);
	return 2;
}

int
cmd_gc_workspaces(int argc, char **argv)
{
	fprintf(stderr, "codumentor: '%s' is not available in this version\n",
	    argv[0]);
	return 2;
}
