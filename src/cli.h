/*
 * cli.h — the command-line commands beyond `api` and `user`, each in a file
 * of its own (cli_*.c), dispatched from main.c. Each gets argv starting at
 * its own name and returns the process exit status.
 */
#ifndef CDM_CLI_H
#define CDM_CLI_H

/* Load the configuration named on the command line (exits on error). */
void	cli_load_config(void);
/*
 * Create the instance directories, open the log (if with_log) and the
 * database with its migrations applied. 0, or -1 with the reason printed.
 */
int	cli_open_storage(int with_log);

int	cmd_relay(int argc, char **argv);		/* cli_relay.c (Apache) */
int	cmd_sandbox(int argc, char **argv);		/* cli_sandbox.c */
int	cmd_gc_workspaces(int argc, char **argv);	/* cli_sandbox.c */
int	cmd_keys(int argc, char **argv);		/* cli_keys.c */

#endif
