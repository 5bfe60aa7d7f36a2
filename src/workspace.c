/*
 * workspace.c — per-conversation workspace directories. Only paths and
 * directory creation: mounting is the sandbox helper's job, file access the
 * file tools'.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "app.h"
#include "util.h"
#include "workspace.h"

int
workspace_paths(const char *conv_id, struct workspace *ws)
{
	const char *base = app.cfg.workspace_isolation.base_dir;

	if (!id_is_valid(conv_id) || base == NULL || *base != '/') {
		errno = EINVAL;
		return -1;
	}
	if ((size_t)snprintf(ws->root, sizeof(ws->root), "%s/%s", base,
	    conv_id) >= sizeof(ws->root) - 8) {
		errno = ENAMETOOLONG;
		return -1;
	}
	snprintf(ws->lower, sizeof(ws->lower), "%s/lower", ws->root);
	snprintf(ws->upper, sizeof(ws->upper), "%s/upper", ws->root);
	snprintf(ws->work, sizeof(ws->work), "%s/work", ws->root);
	snprintf(ws->merged, sizeof(ws->merged), "%s/merged", ws->root);
	snprintf(ws->changed, sizeof(ws->changed), "%s/layers-changed",
	    ws->root);
	return 0;
}

int
workspace_ensure(const char *conv_id, struct workspace *ws)
{
	if (workspace_paths(conv_id, ws) == -1)
		return -1;
	if (mkdir_p(ws->lower, 0700) == -1 || mkdir_p(ws->upper, 0700) == -1 ||
	    mkdir_p(ws->work, 0700) == -1 || mkdir_p(ws->merged, 0700) == -1)
		return -1;
	return 0;
}

int
workspace_touch(const struct workspace *ws)
{
	return utimensat(AT_FDCWD, ws->root, NULL, AT_SYMLINK_NOFOLLOW);
}

int
workspace_mark_changed(const struct workspace *ws)
{
	int fd, rc;

	if ((fd = open(ws->changed, O_WRONLY | O_CREAT | O_NOFOLLOW |
	    O_CLOEXEC | O_NONBLOCK, 0600)) == -1)
		return -1;
	rc = futimens(fd, NULL);
	close(fd);
	return rc;
}
