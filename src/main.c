/*
 * main.c — the command line: global options, then one command. `api` sets the
 * server up in a fixed order (configuration, instance directories, log,
 * database, keys, socket), starts the worker threads, and then the main
 * thread does nothing but wait for signals.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sodium.h>

#include "api.h"
#include "app.h"
#include "bus.h"
#include "cli.h"
#include "crypto.h"
#include "db.h"
#include "engine.h"
#include "log.h"
#include "password.h"
#include "sandbox.h"
#include "selfguard.h"
#include "server.h"
#include "users.h"
#include "util.h"

#define MAX_SETS	64

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: codumentor [-c FILE] [--set KEY=VALUE]... COMMAND [ARGS]\n"
	    "commands:\n"
	    "  api [--listen unix:PATH | HOST:PORT]  serve FastCGI (fd 0 if it is a socket)\n"
	    "  user add NAME [--admin]              add a user; password on standard input\n"
	    "  check                                check prerequisites\n"
	    "  sandbox run [--workspace DIR | --conversation ID] [--net] -- CMD [ARG...]\n"
	    "                                       run one command in the shell sandbox\n"
	    "  gc-workspaces [--ttl DAYS] [--dry-run]  delete workspaces unused for DAYS\n"
	    "  --version                            print the version\n");
}

struct cli {
	const char	*config_path;
	bool		 config_explicit;
	const char	*sets[MAX_SETS];
	int		 nsets;
};

static struct cli cli_opts;	/* what the global options said */

/* Load defaults, the file, the overrides; print the error and exit on failure. */
static void
load_config(const struct cli *cli)
{
	char	err[512];
	int	i;

	config_defaults(&app.cfg);
	if (cli->config_explicit || access(cli->config_path, F_OK) == 0) {
		if (config_load_file(&app.cfg, cli->config_path, err,
		    sizeof(err)) == -1) {
			fprintf(stderr, "codumentor: %s\n", err);
			exit(1);
		}
	}
	for (i = 0; i < cli->nsets; i++)
		if (config_set(&app.cfg, cli->sets[i], err, sizeof(err)) == -1) {
			fprintf(stderr, "codumentor: %s\n", err);
			exit(1);
		}
	if (config_finish(&app.cfg, err, sizeof(err)) == -1) {
		fprintf(stderr, "codumentor: %s\n", err);
		exit(1);
	}
}

void
cli_load_config(void)
{
	load_config(&cli_opts);
}

/*
 * Create DIR 0700 if it is missing and refuse it when group or others have
 * any access: the instance holds password hashes and sealed secrets, the
 * logs name users, the workspaces hold agent-modified repository copies.
 */
static int
private_dir(const char *path, char *err, size_t errlen)
{
	struct stat	st;

	if (mkdir_p(path, 0700) == -1) {
		snprintf(err, errlen, "cannot create %s: %s", path,
		    strerror(errno));
		return -1;
	}
	if (stat(path, &st) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (st.st_mode & 077) {
		snprintf(err, errlen, "%s is readable by group or others (mode "
		    "%04o); fix it with: chmod 700 %s", path,
		    (unsigned)(st.st_mode & 07777), path);
		return -1;
	}
	return 0;
}

/* <instance>, its data/ and logs/, and the workspace base: all 0700. */
static int
instance_prepare(char *err, size_t errlen)
{
	const char	*inst = app.cfg.instance_dir;
	char		 path[4096];
	const char	*sub[] = { "", "/data", "/logs" };
	size_t		 i;

	for (i = 0; i < sizeof(sub) / sizeof(sub[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", inst, sub[i]);
		if (private_dir(path, err, errlen) == -1)
			return -1;
	}
	return private_dir(app.cfg.workspace_isolation.base_dir, err, errlen);
}

int
cli_open_storage(int with_log)
{
	char	err[512], path[4096];
	enum log_level lvl = LOG_INFO;

	if (instance_prepare(err, sizeof(err)) == -1) {
		fprintf(stderr, "codumentor: %s\n", err);
		return -1;
	}
	(void)log_level_parse(app.cfg.log.level, &lvl);
	if (with_log && log_open(app.cfg.log.file, lvl) == -1) {
		fprintf(stderr, "codumentor: cannot open log %s: %s\n",
		    app.cfg.log.file, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/data/codumentor.db", app.cfg.instance_dir);
	if (db_init(path, err, sizeof(err)) == -1) {
		fprintf(stderr, "codumentor: %s\n", err);
		log_error("%s", err);
		return -1;
	}
	return 0;
}

static void
raise_fd_limit(void)
{
	struct rlimit rl;

	/* Every open stream holds a socket and an eventfd. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int
cmd_api(struct cli *cli, int argc, char **argv)
{
	const char		*listen_spec = NULL;
	struct fcgi_server_opts	 o;
	struct fcgi_server	*srv;
	sigset_t		 set;
	char			 err[512], *socket_path = NULL;
	int			 i, sig, fd, mode;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--listen") == 0 && i + 1 < argc)
			listen_spec = argv[++i];
		else {
			fprintf(stderr, "codumentor api: unexpected argument '%s'\n",
			    argv[i]);
			return 2;
		}
	}
	load_config(cli);
	if (listen_spec == NULL)
		listen_spec = app.cfg.listen;

	/* Signals are taken by sigwait() in this thread only. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (cli_open_storage(1) == -1)
		return 1;
	app_keys_init();
	crypto_server_init();
	app.started_ms = mono_ms();
	if (app.jwt_ephemeral)
		log_error("*** auth.jwt_secret is not set: tokens are signed with "
		    "a random per-process key (every restart logs everybody out) "
		    "and stored secrets are NOT encrypted. Set auth.jwt_secret or "
		    "CODUMENTOR_JWT_SECRET. ***");
	raise_fd_limit();
	login_throttle_init(app.cfg.auth.login_max_failures,
	    app.cfg.auth.login_lockout_seconds);
	bus_init();
	if (fcgi_global_init() == -1) {
		fprintf(stderr, "codumentor: FastCGI initialisation failed\n");
		return 1;
	}

	if (fcgi_fd0_is_listener() && strcmp(listen_spec, app.cfg.listen) == 0 &&
	    getenv("CODUMENTOR_IGNORE_FD0") == NULL) {
		fd = 0;
		log_info("serving on the listening socket passed as fd 0");
	} else {
		mode = (int)strtol(app.cfg.server.socket_mode, NULL, 8);
		fd = fcgi_listen(listen_spec, mode, app.cfg.server.socket_group,
		    err, sizeof(err));
		if (fd == -1) {
			fprintf(stderr, "codumentor: %s\n", err);
			log_error("%s", err);
			return 1;
		}
		if (strncmp(listen_spec, "unix:", 5) == 0)
			socket_path = xstrdup(listen_spec + 5);
		log_info("listening on %s", listen_spec);
	}

	/* The helper is the one process this server ever creates. */
	(void)sandbox_start();

	/*
	 * From here on the server cannot exec or fork, and (with Landlock)
	 * sees only its own files. Every thread, the workers below and any
	 * started later, inherits it: nothing that creates a thread may come
	 * before this line, and nothing that needs a process may come after.
	 */
	if (selfguard_install(socket_path, &i, err, sizeof(err)) == -1) {
		fprintf(stderr, "codumentor: %s\n", err);
		log_error("%s", err);
		return 1;
	}
	log_info("self-guard: no_exec %s, landlock %s",
	    app.cfg.security.no_exec ? "on" : "off", i > 0 ? "on" : i == 0 ?
	    "unavailable in this kernel" : "off");

	/* Before requests: interrupted turns are marked failed first. */
	if (engine_start(err, sizeof(err)) == -1) {
		fprintf(stderr, "codumentor: %s\n", err);
		log_error("%s", err);
		return 1;
	}

	o = (struct fcgi_server_opts){
		.listen_fd = fd,
		.workers = app.cfg.server.workers,
		.max_streams = app.cfg.server.max_streams,
		.max_body_bytes = app.cfg.server.max_body_bytes,
		.handler = api_handle,
	};
	if ((srv = fcgi_server_start(&o)) == NULL) {
		fprintf(stderr, "codumentor: cannot start worker threads\n");
		return 1;
	}
	log_info("codumentor %s started: %d workers, pid %d", CDM_VERSION,
	    o.workers, (int)getpid());

	for (;;) {
		if (sigwait(&set, &sig) != 0)
			continue;
		if (sig == SIGHUP) {
			if (log_reopen() == -1)
				fprintf(stderr, "codumentor: log reopen: %s\n",
				    strerror(errno));
			log_info("log reopened");
			continue;
		}
		break;
	}
	log_info("signal %d: stopping (grace %d s)", sig,
	    app.cfg.server.shutdown_grace_seconds);
	/* Running turns stop unrecorded; the next start fails them. */
	engine_stop();
	i = fcgi_server_stop(srv, app.cfg.server.shutdown_grace_seconds);
	if (socket_path != NULL) {
		unlink(socket_path);
		free(socket_path);
	}
	if (i == 0)
		sandbox_stop();
	log_info("stopped%s", i > 0 ? " with requests abandoned" : "");
	log_close();
	/* Worker threads that outlived the grace period still hold state. */
	if (i > 0)
		_exit(0);
	db_shutdown();
	config_free(&app.cfg);
	return 0;
}

/* Read one line from standard input without the newline; NULL on EOF. */
static char *
read_password(void)
{
	char	*line = NULL;
	size_t	 cap = 0;
	ssize_t	 n;

	if ((n = getline(&line, &cap, stdin)) <= 0) {
		free(line);
		return NULL;
	}
	while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		line[--n] = '\0';
	return line;
}

static int
cmd_user(struct cli *cli, int argc, char **argv)
{
	const char	*name = NULL;
	bool		 admin = false;
	struct user	 u;
	char		*pw;
	int		 i, rc;

	if (argc < 3 || strcmp(argv[1], "add") != 0) {
		fprintf(stderr, "usage: codumentor user add NAME [--admin]\n");
		return 2;
	}
	for (i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--admin") == 0)
			admin = true;
		else if (name == NULL)
			name = argv[i];
		else {
			fprintf(stderr, "codumentor user add: unexpected '%s'\n", argv[i]);
			return 2;
		}
	}
	if (name == NULL || !username_is_valid(name)) {
		fprintf(stderr, "codumentor: a user name is 1 to 64 letters, digits,"
		    " '.', '_', '-' or '@'\n");
		return 2;
	}
	load_config(cli);
	if (isatty(STDIN_FILENO))
		fprintf(stderr, "Password for %s: ", name);
	if ((pw = read_password()) == NULL || *pw == '\0') {
		fprintf(stderr, "codumentor: no password given on standard input\n");
		free(pw);
		return 1;
	}
	if (strlen(pw) > PASSWORD_MAX_LEN) {
		fprintf(stderr, "codumentor: the password is longer than %d bytes\n",
		    PASSWORD_MAX_LEN);
		free(pw);
		return 1;
	}
	if (cli_open_storage(0) == -1) {
		free(pw);
		return 1;
	}
	rc = users_create(name, pw, admin, &u);
	sodium_memzero(pw, strlen(pw));
	free(pw);
	db_shutdown();
	if (rc == 1) {
		fprintf(stderr, "codumentor: user '%s' already exists\n", name);
		return 1;
	}
	if (rc == -1) {
		fprintf(stderr, "codumentor: could not store the user\n");
		return 1;
	}
	printf("created user %s (id %s%s)\n", u.username, u.id,
	    admin ? ", administrator" : "");
	config_free(&app.cfg);
	return 0;
}

/* `check`: the server's own confinement (selfguard.c), one line each. */
static void
check_selfguard(void)
{
	int abi = selfguard_landlock_abi();

	if (!app.cfg.security.no_exec)
		printf("security.no_exec: off (the server could start programs)\n");
	else if (selfguard_arch() == NULL)
		printf("security.no_exec: on, but not built for this "
		    "architecture: `api` will refuse to start\n");
	else
		printf("security.no_exec: on (seccomp filter, %s)\n",
		    selfguard_arch());
	if (!app.cfg.security.landlock)
		printf("security.landlock: off\n");
	else if (abi > 0)
		printf("security.landlock: on (Landlock ABI %d)\n", abi);
	else
		printf("security.landlock: on, but this kernel has no Landlock: "
		    "not applied\n");
}

/* One line per sandbox prerequisite; 1 when isolation is on but unusable. */
static int
check_sandbox(void)
{
	struct sandbox_opts	o = { .quiet = 1 };
	struct sandbox_check	v[16];
	char			reason[512];
	size_t			i, n;
	int			avail;

	(void)sandbox_start_opts(&o);
	n = sandbox_checks(v, sizeof(v) / sizeof(v[0]));
	avail = sandbox_available(reason, sizeof(reason));
	for (i = 0; i < n; i++)
		printf("sandbox.%s: %s: %s\n", v[i].name, v[i].ok == 1 ? "ok" :
		    v[i].ok == 0 ? "FAILED" : "not tested", v[i].detail);
	sandbox_stop();
	if (!app.cfg.workspace_isolation.enabled) {
		printf("sandbox: isolation disabled in the configuration: "
		    "commands run on the host\n");
		return 0;
	}
	if (avail)
		printf("sandbox: available\n");
	else
		printf("sandbox: UNAVAILABLE: %s\n", reason);
	return !avail;
}

static int
cmd_check(struct cli *cli)
{
	int bad = 0;

	load_config(cli);
	printf("config: ok (%s)\n", app.cfg.path ? app.cfg.path : "defaults");
	printf("instance_dir: %s\n", app.cfg.instance_dir);
	printf("auth.jwt_secret: %s\n", app.cfg.auth.jwt_secret &&
	    *app.cfg.auth.jwt_secret ? "set" : "NOT SET (plaintext stores)");
	check_selfguard();
	bad = check_sandbox();
	config_free(&app.cfg);
	return bad;
}

int
main(int argc, char **argv)
{
	struct cli	cli = { .config_path = CDM_DEFAULT_CONFIG };
	int		i;

	if (sodium_init() < 0) {
		fprintf(stderr, "codumentor: libsodium failed to initialise\n");
		return 1;
	}
	umask(077);
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-c") == 0 && i + 1 < argc) {
			cli.config_path = argv[++i];
			cli.config_explicit = true;
		} else if (strcmp(argv[i], "--set") == 0 && i + 1 < argc) {
			if (cli.nsets == MAX_SETS) {
				fprintf(stderr, "codumentor: too many --set options\n");
				return 2;
			}
			cli.sets[cli.nsets++] = argv[++i];
		} else if (strncmp(argv[i], "--set=", 6) == 0 && cli.nsets < MAX_SETS) {
			cli.sets[cli.nsets++] = argv[i] + 6;
		} else if (strcmp(argv[i], "--version") == 0) {
			printf("codumentor %s\n", CDM_VERSION);
			return 0;
		} else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 0;
		} else
			break;
	}
	if (i == argc) {
		usage(stderr);
		return 2;
	}
	argc -= i;
	argv += i;
	cli_opts = cli;
	if (strcmp(argv[0], "api") == 0)
		return cmd_api(&cli, argc, argv);
	if (strcmp(argv[0], "user") == 0)
		return cmd_user(&cli, argc, argv);
	if (strcmp(argv[0], "check") == 0)
		return cmd_check(&cli);
	if (strcmp(argv[0], "relay") == 0)
		return cmd_relay(argc, argv);
	if (strcmp(argv[0], "sandbox") == 0)
		return cmd_sandbox(argc, argv);
	if (strcmp(argv[0], "gc-workspaces") == 0)
		return cmd_gc_workspaces(argc, argv);
	if (strcmp(argv[0], "keys") == 0)
		return cmd_keys(argc, argv);
	fprintf(stderr, "codumentor: unknown command '%s'\n", argv[0]);
	usage(stderr);
	return 2;
}
