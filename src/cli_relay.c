/*
 * cli_relay.c — `codumentor relay`, the program Apache mod_fcgid spawns: it
 * checks its surroundings (a listening socket on fd 0, a unix socket in
 * `listen`), works out how to start the resident server with the same
 * global options it was given, and hands over to relay.c. It opens no
 * database and no log file: its messages go to stderr, Apache's error log.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "cli.h"
#include "relay.h"
#include "server.h"
#include "util.h"

#define CMDLINE_MAX	65536
#define ARGS_MAX	256
#define START_TIMEOUT_MS 10000

/* This program's path; after a package upgrade the new file at that path. */
static char *
self_exe(void)
{
	char	buf[PATH_MAX];
	ssize_t	n;
	size_t	len;

	if ((n = readlink("/proc/self/exe", buf, sizeof(buf) - 1)) <= 0)
		return NULL;
	buf[n] = '\0';
	len = (size_t)n;
	if (len > 10 && strcmp(buf + len - 10, " (deleted)") == 0)
		buf[len - 10] = '\0';
	return xstrdup(buf);
}

/*
 * The server's argv: this program, our own global options (-c FILE, --set
 * KEY=VALUE) read back from /proc/self/cmdline, then "api". The file name
 * is made absolute, since the server does not run in our directory.
 */
static char **
server_argv(const char *exe)
{
	char	*buf, *p, *end, *args[ARGS_MAX], **argv, *abs;
	ssize_t	 n;
	size_t	 len = 0;
	int	 fd, argc = 0, i, k = 1;

	buf = xmalloc(CMDLINE_MAX + 1);
	if ((fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC)) == -1) {
		free(buf);
		return NULL;
	}
	while (len < CMDLINE_MAX &&
	    (n = read(fd, buf + len, CMDLINE_MAX - len)) > 0)
		len += (size_t)n;
	close(fd);
	buf[len] = '\0';
	for (p = buf, end = buf + len; p < end && argc < ARGS_MAX; p += strlen(p) + 1)
		args[argc++] = p;

	argv = xcalloc(ARGS_MAX + 2, sizeof(*argv));
	argv[0] = xstrdup(exe);
	for (i = 1; i < argc; ) {
		if (strcmp(args[i], "-c") == 0 && i + 1 < argc) {
			abs = realpath(args[i + 1], NULL);
			argv[k++] = xstrdup("-c");
			argv[k++] = abs ? abs : xstrdup(args[i + 1]);
			i += 2;
		} else if (strcmp(args[i], "--set") == 0 && i + 1 < argc) {
			argv[k++] = xstrdup(args[i]);
			argv[k++] = xstrdup(args[i + 1]);
			i += 2;
		} else if (strncmp(args[i], "--set=", 6) == 0) {
			argv[k++] = xstrdup(args[i]);
			i++;
		} else
			break;
	}
	argv[k] = xstrdup("api");
	free(buf);
	return argv;
}

int
cmd_relay(int argc, char **argv)
{
	struct relay_opts	 o;
	const char		*sock;
	char			*exe;

	if (argc != 1) {
		fprintf(stderr, "usage: codumentor [-c FILE] [--set KEY=VALUE]... "
		    "relay\n");
		return 2;
	}
	cli_load_config();
	if (strncmp(app.cfg.listen, "unix:", 5) != 0) {
		fprintf(stderr, "codumentor relay: 'listen' is %s; the relay "
		    "needs the server on a unix socket (unix:PATH)\n",
		    app.cfg.listen);
		return 2;
	}
	if (!fcgi_fd0_is_listener()) {
		fprintf(stderr, "codumentor relay: standard input is not a "
		    "listening socket; Apache mod_fcgid (or spawn-fcgi) starts "
		    "the relay with one\n");
		return 2;
	}
	sock = app.cfg.listen + 5;
	if ((exe = self_exe()) == NULL) {
		fprintf(stderr, "codumentor relay: /proc/self/exe: %s\n",
		    strerror(errno));
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	/*
	 * logrotate may signal every `codumentor` of the service user to make
	 * the server reopen its log; to a relay that must not be fatal.
	 */
	signal(SIGHUP, SIG_IGN);
	o = (struct relay_opts){
		.listen_fd = 0,
		.upstream = sock,
		.lock_path = xasprintf("%s.lock", sock),
		.exe = exe,
		.start_argv = server_argv(exe),
		.start_timeout_ms = START_TIMEOUT_MS,
	};
	(void)relay_serve(&o);
	free((char *)o.lock_path);
	for (char *const *a = o.start_argv; a && *a; a++)
		free(*a);
	free((void *)o.start_argv);
	free(exe);
	return 1;
}
