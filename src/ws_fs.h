/*
 * ws_fs.h — the merged view of a conversation's workspace for the file
 * tools: its two overlay layers (workspace.h) opened as directory fds, a
 * path argument checked as text, then resolved, read, written (copy-up into
 * the upper layer) and listed with whiteouts honoured, every open confined
 * by openat2 RESOLVE_BENEATH. Failures are worded into the tool_result.
 */
#ifndef CDM_WS_FS_H
#define CDM_WS_FS_H

#include <sys/types.h>
#include <sys/stat.h>

#include <stddef.h>

struct tool_ctx;
struct tool_result;

#define WS_FS_PATH_MAX	1024		/* bytes of a path argument */
#define WS_FS_LIST_MAX	2000		/* entries of one listing */

enum ws_layer { WS_UPPER, WS_LOWER };

struct ws_fs {
	int		 fd[2];		/* O_PATH directory fds of the layers */
	const char	*conv_id;	/* the tool_ctx's, for sandbox_forget */
};

struct ws_entry {
	char	*name;
	char	 type;		/* 'd' directory, 'f' file, 'l' symlink, 'o' other */
	int	 hidden;	/* a whiteout: hides the lower entry */
	off_t	 size;
};

struct ws_listing {
	struct ws_entry	*v;
	size_t		 n, cap;
	int		 truncated;
};

int	ws_fs_open(const struct tool_ctx *, struct ws_fs *,
	    struct tool_result *);
void	ws_fs_close(struct ws_fs *);

/* A path argument into out (at least WS_FS_PATH_MAX + 1 bytes), or -1. */
int	ws_fs_path_check(const char *, char *, size_t, struct tool_result *);

/* An O_PATH fd of path in the merged view, with its layer and stat. */
int	ws_fs_resolve(struct ws_fs *, const char *, enum ws_layer *,
	    struct stat *, struct tool_result *);

/* A regular file's whole content (at most max bytes), NUL-terminated. */
int	ws_fs_read(struct ws_fs *, const char *, size_t, char **, size_t *,
	    struct tool_result *);

/*
 * Write a file into the upper layer, replacing it atomically; the sandbox
 * helper is told (sandbox_forget) so that its next command sees it.
 */
int	ws_fs_write(struct ws_fs *, const char *, const char *, size_t,
	    struct tool_result *);

/* The merged directory at path, sorted by name; whiteouts marked hidden. */
int	ws_fs_list(struct ws_fs *, const char *, struct ws_listing *,
	    struct tool_result *);
void	ws_fs_listing_free(struct ws_listing *);

#endif
