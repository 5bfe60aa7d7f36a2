/*
 * workspace.h — where a conversation's workspace lives on the host:
 * <workspace_isolation.base_dir>/<conversation id>/ with
 *   lower/  the read-only base (empty for now; a repository checkout later)
 *   upper/  the overlay's upper layer: every write the agent makes lands here
 *   work/   overlayfs's work directory
 *   merged/ where the helper mounts the overlay, inside its own mount
 *           namespace only (on the host it stays an empty directory)
 *   layers-changed  a marker whose mtime says the layers were changed by
 *           something other than the server's own helper (the command line's
 *           `sandbox run --conversation`): an overlay the helper keeps
 *           mounted from before is then stale (sandbox/hold.c)
 * all 0700. The sandbox mounts lower+upper at /workspace; the server's file
 * tools operate on the same layers. The mtime of the root is the
 * workspace's last use (workspace_touch: a turn's start, every command),
 * which `codumentor gc-workspaces`
 * compares with workspace_isolation.ttl_days.
 */
#ifndef CDM_WORKSPACE_H
#define CDM_WORKSPACE_H

#define WS_PATH_MAX	4096

struct workspace {
	char	root[WS_PATH_MAX];
	char	lower[WS_PATH_MAX];
	char	upper[WS_PATH_MAX];
	char	work[WS_PATH_MAX];
	char	merged[WS_PATH_MAX];
	char	changed[WS_PATH_MAX];
};

/* Compute the paths (no I/O). -1 for an invalid id or a too-long path. */
int	workspace_paths(const char *conv_id, struct workspace *ws);
/* Compute and create the directories (0700). 0 / -1 with errno. */
int	workspace_ensure(const char *conv_id, struct workspace *ws);
/* Mark the workspace used now (its root's mtime). 0 / -1 with errno. */
int	workspace_touch(const struct workspace *ws);
/* Say the layers were changed from outside the server. 0 / -1 with errno. */
int	workspace_mark_changed(const struct workspace *ws);

#endif
