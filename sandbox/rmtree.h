/*
 * rmtree.h — remove a directory tree without ever following a symbolic
 * link, for workspace layers the sandbox wrote (the helper's scratch
 * workspaces, `codumentor sandbox run`, `codumentor gc-workspaces`).
 */
#ifndef CDM_SANDBOX_RMTREE_H
#define CDM_SANDBOX_RMTREE_H

#include <stdint.h>

struct rmtree_stats {
	uint64_t	files;		/* entries removed (or that would be) */
	uint64_t	bytes;		/* their disk usage, st_blocks * 512 */
};

/*
 * Remove NAME below the directory dirfd (AT_FDCWD for a path). A symlink
 * named NAME is removed itself, never followed; so is every symlink inside.
 * Directories the sandbox left unreadable (overlayfs makes work/work 0000)
 * are made 0700 first. With dry_run nothing is removed and stats says what
 * would be. 0, or -1 with errno (what could be removed was).
 */
int	rmtree_at(int at, const char *name, int dry_run,
	    struct rmtree_stats *stats);

#endif
