/*
 * cli_sandbox.c — `codumentor sandbox run` (one command through the same
 * helper and shell profile the agent gets, for operators to verify a host or
 * look into a conversation's workspace) and `codumentor gc-workspaces`
 * (delete workspaces unused for longer than the TTL). Neither talks to a
 * running server: `sandbox run` starts its own helper, and gc-workspaces
 * reads the database only to skip conversations whose turn is running.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app.h"
#include "cli.h"
#include "db.h"
#include "rmtree.h"
#include "sandbox.h"
#include "util.h"
#include "workspace.h"

/* Exit status when the command could not be run at all (as docker/podman). */
#define EXIT_NOT_RUN	125
#define SCRATCH_TTL_S	(24 * 3600)	/* .run-* and .selftest-* leftovers */
#define RUNNING_MAX	4096

static int
sandbox_usage(void)
{
	fprintf(stderr, "usage: codumentor sandbox run [--workspace DIR | "
	    "--conversation ID] [--net] -- CMD [ARG...]\n");
	return 2;
}

/* 0 the conversation exists, 1 it does not, -1 the database failed. */
static int
conversation_exists(const char *id)
{
	sqlite3_stmt	*st;
	int		 rc;

	st = db_stmt("SELECT 1 FROM conversations WHERE id = ?");
	if (st == NULL)
		return -1;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		return 0;
	return rc == SQLITE_DONE ? 1 : db_fail("conversation lookup");
}

/* A scratch workspace <base>/.run-XXXXXX with upper, work, merged (and lower). */
static int
scratch_make(char *dir, size_t len, struct workspace *ws, int with_lower)
{
	const char *base = app.cfg.workspace_isolation.base_dir;

	if (mkdir_p(base, 0700) == -1)
		return -1;
	snprintf(dir, len, "%s/.run-XXXXXX", base);
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(ws->root, sizeof(ws->root), "%s", dir);
	snprintf(ws->lower, sizeof(ws->lower), "%s/lower", dir);
	snprintf(ws->upper, sizeof(ws->upper), "%s/upper", dir);
	snprintf(ws->work, sizeof(ws->work), "%s/work", dir);
	snprintf(ws->merged, sizeof(ws->merged), "%s/merged", dir);
	if ((with_lower && mkdir(ws->lower, 0700) == -1) ||
	    mkdir(ws->upper, 0700) == -1 || mkdir(ws->work, 0700) == -1 ||
	    mkdir(ws->merged, 0700) == -1)
		return -1;
	return 0;
}

static int
run_failed(const char *what, const char *why)
{
	fprintf(stderr, "codumentor sandbox run: %s: %s\n", what, why);
	return EXIT_NOT_RUN;
}

int
cmd_sandbox(int argc, char **argv)
{
	const char		*dir = NULL, *conv = NULL;
	struct sandbox_opts	 o = { 0 };
	struct sandbox_direct	 d;
	struct sandbox_result	 res;
	struct workspace	 ws;
	char			 scratch[PATH_MAX] = "", lower[PATH_MAX];
	int			 i, rc, net = 0;

	if (argc < 2 || strcmp(argv[1], "run") != 0)
		return sandbox_usage();
	for (i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		} else if (strcmp(argv[i], "--workspace") == 0 && i + 1 < argc)
			dir = argv[++i];
		else if (strcmp(argv[i], "--conversation") == 0 && i + 1 < argc)
			conv = argv[++i];
		else if (strcmp(argv[i], "--net") == 0)
			net = 1;
		else if (argv[i][0] == '-')
			return sandbox_usage();
		else
			break;
	}
	if (i >= argc || (dir != NULL && conv != NULL))
		return sandbox_usage();
	cli_load_config();
	if (!app.cfg.workspace_isolation.enabled)
		return run_failed("refused", "workspace isolation is disabled in "
		    "the configuration (workspace_isolation.enabled: false), so "
		    "there is no sandbox to run in");
	if (conv != NULL) {
		if (!id_is_valid(conv))
			return run_failed(conv, "not a conversation id");
		if (cli_open_storage(0) == -1)
			return EXIT_NOT_RUN;
		rc = conversation_exists(conv);
		db_shutdown();
		if (rc != 0)
			return run_failed(conv, rc == 1 ? "no such conversation" :
			    "the database cannot be read");
	}
	if (dir != NULL && (realpath(dir, lower) == NULL ||
	    access(lower, R_OK | X_OK) == -1))
		return run_failed(dir, strerror(errno));

	/* The helper first: if it cannot run, nothing is created. */
	o.allow_net = net;
	o.quiet = 1;
	if (sandbox_start_opts(&o) == -1) {
		char reason[512];

		sandbox_available(reason, sizeof(reason));
		sandbox_stop();
		return run_failed("sandbox unavailable", reason);
	}
	if (conv != NULL) {
		if (workspace_ensure(conv, &ws) == -1) {
			sandbox_stop();
			return run_failed("workspace", strerror(errno));
		}
		(void)workspace_touch(&ws);
	} else if (scratch_make(scratch, sizeof(scratch), &ws, dir == NULL) == -1) {
		rc = errno;
		sandbox_stop();
		if (*scratch)
			rmtree_at(AT_FDCWD, scratch, 0, NULL);
		return run_failed("scratch workspace", strerror(rc));
	}
	memset(&d, 0, sizeof(d));
	d.lower = dir != NULL ? lower : ws.lower;
	d.upper = ws.upper;
	d.work = ws.work;
	d.merged = ws.merged;
	d.argv = (const char *const *)(argv + i);
	d.net = net;
	d.out_fd = STDOUT_FILENO;
	d.err_fd = STDERR_FILENO;
	fflush(stdout);
	rc = sandbox_run_direct(&d, &res);
	sandbox_stop();
	/* A server may keep this workspace mounted: tell it to look again. */
	if (conv != NULL && workspace_mark_changed(&ws) == -1)
		fprintf(stderr, "codumentor sandbox run: %s: %s\n", ws.changed,
		    strerror(errno));
	if (*scratch && rmtree_at(AT_FDCWD, scratch, 0, NULL) == -1)
		fprintf(stderr, "codumentor sandbox run: cannot remove %s: %s\n",
		    scratch, strerror(errno));
	if (rc == -1)
		return run_failed(res.started ? "failed" : "not run", res.error);
	sandbox_result_free(&res);
	if (res.timed_out)
		fprintf(stderr, "codumentor sandbox run: timed out\n");
	return res.signal ? 128 + res.signal : res.exit_code;
}

/* ------------------------------------------------------------ gc */

struct running {
	char	ids[RUNNING_MAX][ID_BUFSZ];
	size_t	n;
	int	overflow;
};

/* Conversations with a turn that is running or about to: never collected. */
static int
running_load(struct running *r)
{
	sqlite3_stmt	*st;
	const char	*id;
	int		 rc;

	st = db_stmt("SELECT DISTINCT conversation_id FROM turns "
	    "WHERE status IN ('running', 'queued')");
	if (st == NULL)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		id = (const char *)sqlite3_column_text(st, 0);
		if (id == NULL || strlen(id) >= ID_BUFSZ)
			continue;
		if (r->n == RUNNING_MAX) {
			r->overflow = 1;
			break;
		}
		snprintf(r->ids[r->n++], ID_BUFSZ, "%s", id);
	}
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : db_fail("turns");
}

static int
running_has(const struct running *r, const char *id)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (strcmp(r->ids[i], id) == 0)
			return 1;
	return 0;
}

static int
gc_usage(void)
{
	fprintf(stderr, "usage: codumentor gc-workspaces [--ttl DAYS] "
	    "[--dry-run]\n");
	return 2;
}

int
cmd_gc_workspaces(int argc, char **argv)
{
	struct running		*run;
	struct rmtree_stats	 st, total = { 0, 0 };
	struct dirent		*de;
	struct stat		 sb;
	DIR			*d;
	long long		 ttl_days = -1;
	time_t			 now = time(NULL), limit;
	int			 i, fd, dry = 0, bad = 0, removed = 0, scratch;
	const char		*base;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--dry-run") == 0)
			dry = 1;
		else if (strcmp(argv[i], "--ttl") == 0 && i + 1 < argc) {
			if ((ttl_days = parse_uint(argv[++i], 3650)) < 1) {
				fprintf(stderr, "codumentor gc-workspaces: --ttl "
				    "takes 1 to 3650 days\n");
				return 2;
			}
		} else
			return gc_usage();
	}
	cli_load_config();
	if (ttl_days < 1)
		ttl_days = app.cfg.workspace_isolation.ttl_days;
	base = app.cfg.workspace_isolation.base_dir;
	if (cli_open_storage(0) == -1)
		return 1;
	run = xcalloc(1, sizeof(*run));
	if (running_load(run) == -1) {
		fprintf(stderr, "codumentor gc-workspaces: cannot read the running "
		    "turns; nothing removed\n");
		db_shutdown();
		free(run);
		return 1;
	}
	db_shutdown();
	if ((fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1 ||
	    (d = fdopendir(fd)) == NULL) {
		if (fd != -1)
			close(fd);
		free(run);
		if (errno == ENOENT) {
			printf("gc-workspaces: %s does not exist; nothing to do\n",
			    base);
			return 0;
		}
		fprintf(stderr, "codumentor gc-workspaces: %s: %s\n", base,
		    strerror(errno));
		return 1;
	}
	while ((errno = 0, de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(fd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) == -1)
			continue;
		if (S_ISLNK(sb.st_mode)) {
			printf("skipped %s: a symbolic link, not followed\n",
			    de->d_name);
			continue;
		}
		scratch = strncmp(de->d_name, ".run-", 5) == 0 ||
		    strncmp(de->d_name, ".selftest-", 10) == 0;
		if (!S_ISDIR(sb.st_mode) || (!scratch && !id_is_valid(de->d_name)))
			continue;
		limit = scratch ? now - SCRATCH_TTL_S :
		    now - (time_t)ttl_days * 86400;
		if (sb.st_mtime >= limit)
			continue;
		if (!scratch && (run->overflow || running_has(run, de->d_name))) {
			printf("skipped %s: a turn is running\n", de->d_name);
			continue;
		}
		memset(&st, 0, sizeof(st));
		if (rmtree_at(fd, de->d_name, dry, &st) == -1) {
			fprintf(stderr, "codumentor gc-workspaces: %s/%s: %s\n",
			    base, de->d_name, strerror(errno));
			bad = 1;
		}
		printf("%s %s: %llu files, %llu bytes, unused for %lld days\n",
		    dry ? "would remove" : "removed", de->d_name,
		    (unsigned long long)st.files, (unsigned long long)st.bytes,
		    (long long)((now - sb.st_mtime) / 86400));
		total.files += st.files;
		total.bytes += st.bytes;
		removed++;
	}
	closedir(d);
	free(run);
	printf("gc-workspaces: %s %d workspaces, %llu bytes (TTL %lld days, %s)\n",
	    dry ? "would free" : "freed", removed,
	    (unsigned long long)total.bytes, ttl_days, base);
	config_free(&app.cfg);
	return bad;
}
