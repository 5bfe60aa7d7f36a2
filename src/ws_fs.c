/*
 * ws_fs.c — the workspace's files as one merged view of the overlay's two
 * layers (workspace.h): reads see the upper layer, else the lower one (a 0/0
 * character device in upper is a whiteout: deleted); writes copy up into the
 * upper layer only; listings merge both. Every path is checked as text first
 * (relative, no "..") and then resolved with openat2 RESOLVE_BENEATH |
 * RESOLVE_NO_MAGICLINKS, so symlinks that lead out, /proc magic links and
 * escapes are refused by the kernel before any byte is read or written; only
 * regular files are ever opened for I/O. Writes walk directories one
 * component at a time with O_NOFOLLOW.
 *
 * It does not parse tool arguments or format tool output (tool_files.c).
 * Known limit: a symlink resolves within its own layer, and overlayfs opaque
 * directories are not consulted (the lower layer is empty until the sandbox
 * provides a base); see doc/architecture.md "Engine".
 */
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <linux/openat2.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "sandbox.h"
#include "tools.h"
#include "util.h"
#include "workspace.h"
#include "ws_fs.h"

/*
 * Fail closed like the shell: with isolation enabled, file tools run only
 * when the sandbox does, so they never show a view the shell cannot have.
 */
int
ws_fs_open(const struct tool_ctx *ctx, struct ws_fs *w, struct tool_result *res)
{
	struct workspace	ws;
	char			reason[256];

	w->fd[WS_UPPER] = w->fd[WS_LOWER] = -1;
	w->conv_id = ctx->conv_id;
	if (app.cfg.workspace_isolation.enabled &&
	    !sandbox_available(reason, sizeof(reason))) {
		tool_fail(res, "workspace isolation is enabled but unavailable, "
		    "so file tools are disabled: %s", reason);
		return -1;
	}
	if (workspace_ensure(ctx->conv_id, &ws) == -1) {
		tool_fail(res, "the workspace cannot be prepared");
		return -1;
	}
	w->fd[WS_UPPER] = open(ws.upper, O_PATH | O_DIRECTORY | O_CLOEXEC);
	w->fd[WS_LOWER] = open(ws.lower, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (w->fd[WS_UPPER] == -1 || w->fd[WS_LOWER] == -1) {
		tool_fail(res, "the workspace cannot be opened");
		if (w->fd[WS_UPPER] != -1)
			close(w->fd[WS_UPPER]);
		if (w->fd[WS_LOWER] != -1)
			close(w->fd[WS_LOWER]);
		return -1;
	}
	return 0;
}

void
ws_fs_close(struct ws_fs *w)
{
	close(w->fd[WS_UPPER]);
	close(w->fd[WS_LOWER]);
}

/*
 * The text check before any I/O: relative, at most WS_FS_PATH_MAX bytes, no
 * "..". "" and "." mean the root. "./" prefixes and doubled slashes are
 * tolerated; the result is written to out without them.
 */
int
ws_fs_path_check(const char *path, char *out, size_t outlen,
    struct tool_result *res)
{
	const char	*p = path, *slash;
	size_t		 o = 0, n;

	if (path == NULL)
		path = p = "";
	if (strlen(path) > WS_FS_PATH_MAX) {
		tool_fail(res, "the path is longer than %d bytes",
		    WS_FS_PATH_MAX);
		return -1;
	}
	if (path[0] == '/') {
		tool_fail(res, "refused: '%.200s' is absolute; paths are relative "
		    "to the workspace root", path);
		return -1;
	}
	out[0] = '\0';
	while (*p != '\0') {
		slash = strchr(p, '/');
		n = slash ? (size_t)(slash - p) : strlen(p);
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			tool_fail(res, "refused: '%.200s' contains '..'; paths "
			    "stay inside the workspace", path);
			return -1;
		}
		if (n > 0 && !(n == 1 && p[0] == '.')) {
			if (o + n + 2 > outlen) {
				tool_fail(res, "the path is too long");
				return -1;
			}
			if (o > 0)
				out[o++] = '/';
			memcpy(out + o, p, n);
			o += n;
			out[o] = '\0';
		}
		p += n;
		if (*p == '/')
			p++;
	}
	return 0;
}

static int
open_beneath(int dirfd, const char *path, int flags)
{
	struct open_how how;

	memset(&how, 0, sizeof(how));
	how.flags = (unsigned long long)(flags | O_CLOEXEC);
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
	return (int)syscall(SYS_openat2, dirfd, *path ? path : ".", &how,
	    sizeof(how));
}

static int
is_whiteout(const struct stat *st)
{
	return S_ISCHR(st->st_mode) && st->st_rdev == makedev(0, 0);
}

/* The sentence for a failed resolution of path. */
static void
resolve_fail(struct tool_result *res, const char *path, int err)
{
	switch (err) {
	case EXDEV:
		tool_fail(res, "refused: '%.200s' leads outside the workspace",
		    path);
		break;
	case ELOOP:
		tool_fail(res, "refused: '%.200s' goes through a symlink loop or "
		    "a /proc magic link", path);
		break;
	case ENOENT:
		tool_fail(res, "'%.200s' does not exist", path);
		break;
	case ENOTDIR:
		tool_fail(res, "a component of '%.200s' is not a directory",
		    path);
		break;
	default:
		tool_fail(res, "'%.200s': %s", path, strerror(err));
		break;
	}
}

/*
 * Does the upper layer hide path in the lower one: a whiteout or a
 * non-directory at path or at any directory above it?
 */
static int
upper_hides(struct ws_fs *w, const char *path)
{
	char		 prefix[WS_FS_PATH_MAX + 1];
	struct stat	 st;
	size_t		 i, n = strlen(path);
	int		 fd;

	for (i = 1; i <= n; i++) {
		if (i < n && path[i] != '/')
			continue;
		memcpy(prefix, path, i);
		prefix[i] = '\0';
		fd = open_beneath(w->fd[WS_UPPER], prefix, O_PATH | O_NOFOLLOW);
		if (fd == -1)
			return 0;	/* upper has nothing there */
		if (fstat(fd, &st) == -1) {
			close(fd);
			return 1;
		}
		close(fd);
		if (is_whiteout(&st))
			return 1;
		if (i < n && !S_ISDIR(st.st_mode))
			return 1;
	}
	return 0;
}

/*
 * Find path in the merged view. 0 with *layer and an O_PATH fd (and st),
 * -1 with res set.
 */
int
ws_fs_resolve(struct ws_fs *w, const char *path, enum ws_layer *layer,
    struct stat *st, struct tool_result *res)
{
	int fd, err;

	fd = open_beneath(w->fd[WS_UPPER], path, O_PATH);
	if (fd != -1) {
		if (fstat(fd, st) == 0 && !is_whiteout(st)) {
			*layer = WS_UPPER;
			return fd;
		}
		close(fd);
		resolve_fail(res, path, ENOENT);
		return -1;
	}
	err = errno;
	if (err != ENOENT && err != ENOTDIR) {
		resolve_fail(res, path, err);
		return -1;
	}
	if (*path != '\0' && upper_hides(w, path)) {
		resolve_fail(res, path, ENOENT);
		return -1;
	}
	if ((fd = open_beneath(w->fd[WS_LOWER], path, O_PATH)) == -1) {
		resolve_fail(res, path, errno == ENOTDIR ? ENOENT : errno);
		return -1;
	}
	if (fstat(fd, st) == -1) {
		close(fd);
		resolve_fail(res, path, errno);
		return -1;
	}
	*layer = WS_LOWER;
	return fd;
}

/*
 * The whole content of a regular file of the merged view (at most
 * FILE_MAX). The file is opened for reading only after the O_PATH
 * descriptor showed a regular file, and the second open must reach the same
 * inode, so a device or FIFO is never opened and a swap in between is seen.
 */
int
ws_fs_read(struct ws_fs *w, const char *path, size_t max, char **out,
    size_t *outlen, struct tool_result *res)
{
	struct stat	 st, st2;
	enum ws_layer	 layer;
	char		*buf;
	size_t		 len = 0;
	ssize_t		 r;
	int		 pfd, fd;

	if ((pfd = ws_fs_resolve(w, path, &layer, &st, res)) == -1)
		return -1;
	close(pfd);
	if (!S_ISREG(st.st_mode)) {
		tool_fail(res, "refused: '%.200s' is not a regular file", path);
		return -1;
	}
	if (st.st_size > (off_t)max) {
		tool_fail(res, "'%.200s' is larger than %zu bytes", path, max);
		return -1;
	}
	fd = open_beneath(w->fd[layer], path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
	if (fd == -1) {
		resolve_fail(res, path, errno);
		return -1;
	}
	if (fstat(fd, &st2) == -1 || st2.st_dev != st.st_dev ||
	    st2.st_ino != st.st_ino || !S_ISREG(st2.st_mode)) {
		close(fd);
		tool_fail(res, "refused: '%.200s' changed while it was opened",
		    path);
		return -1;
	}
	buf = xmalloc(max + 2);
	while (len <= max) {
		r = read(fd, buf + len, max + 1 - len);
		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	if (len > max) {
		free(buf);
		tool_fail(res, "'%.200s' is larger than %zu bytes", path, max);
		return -1;
	}
	buf[len] = '\0';
	*out = buf;
	*outlen = len;
	return 0;
}

/*
 * The directory fd of path's parent in the upper layer, created as needed
 * (copy-up of the directories), walking one name at a time without
 * following symlinks. *base points at the last component.
 */
static int
upper_parent(struct ws_fs *w, char *path, const char **base,
    struct tool_result *res)
{
	struct stat	 st;
	char		*p = path, *slash;
	int		 dfd, nfd;

	if ((dfd = dup(w->fd[WS_UPPER])) == -1) {
		tool_fail(res, "cannot open the workspace");
		return -1;
	}
	while ((slash = strchr(p, '/')) != NULL) {
		*slash = '\0';
		if (fstatat(dfd, p, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    is_whiteout(&st))
			unlinkat(dfd, p, 0);	/* recreated as a directory */
		if (mkdirat(dfd, p, 0755) == -1 && errno != EEXIST)
			goto fail;
		nfd = openat(dfd, p, O_PATH | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
		if (nfd == -1)
			goto fail;
		close(dfd);
		dfd = nfd;
		*slash = '/';
		p = slash + 1;
	}
	*base = p;
	return dfd;
fail:
	tool_fail(res, "refused: a directory of '%.200s' cannot be created in "
	    "the workspace (%s)", path, errno == ENOTDIR || errno == ELOOP ?
	    "a component is a file or a symlink" : strerror(errno));
	*slash = '/';
	close(dfd);
	return -1;
}

/* Write data as path in the upper layer: a temporary file renamed over. */
static int
write_upper(struct ws_fs *w, const char *path, const char *data, size_t len,
    struct tool_result *res)
{
	struct stat	 st;
	char		 copy[WS_FS_PATH_MAX + 1], tmp[64], rid[ID_BUFSZ];
	const char	*base;
	size_t		 off = 0;
	ssize_t		 r;
	int		 dfd, fd;

	if (*path == '\0') {
		tool_fail(res, "a file path is required");
		return -1;
	}
	strlcpy_(copy, path, sizeof(copy));
	if ((dfd = upper_parent(w, copy, &base, res)) == -1)
		return -1;
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (is_whiteout(&st))
			unlinkat(dfd, base, 0);
		else if (!S_ISREG(st.st_mode)) {
			close(dfd);
			tool_fail(res, "refused: '%.200s' exists and is not a "
			    "regular file", path);
			return -1;
		}
	}
	random_id(rid);
	snprintf(tmp, sizeof(tmp), ".cdm-write-%s", rid);
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0644);
	if (fd == -1) {
		close(dfd);
		tool_fail(res, "cannot write '%.200s': %s", path, strerror(errno));
		return -1;
	}
	while (off < len) {
		r = write(fd, data + off, len - off);
		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		off += (size_t)r;
	}
	if (off < len || close(fd) == -1 || renameat(dfd, tmp, dfd, base) == -1) {
		tool_fail(res, "cannot write '%.200s': %s", path, strerror(errno));
		unlinkat(dfd, tmp, 0);
		close(dfd);
		return -1;
	}
	close(dfd);
	return 0;
}

int
ws_fs_write(struct ws_fs *w, const char *path, const char *data, size_t len,
    struct tool_result *res)
{
	int rc = write_upper(w, path, data, len, res);

	/*
	 * The layers changed behind the overlay the sandbox helper may keep
	 * mounted (even a failed write may have copied directories up): it
	 * must mount afresh before the next command.
	 */
	sandbox_forget(w->conv_id);
	return rc;
}

void
ws_fs_listing_free(struct ws_listing *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i].name);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static struct ws_entry *
listing_find(struct ws_listing *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i].name, name) == 0)
			return &l->v[i];
	return NULL;
}

/* Add the entries of one layer's directory; upper first, then lower. */
static void
listing_add_layer(struct ws_listing *l, int layerfd, const char *path,
    int upper)
{
	struct dirent	*de;
	struct stat	 st;
	DIR		*d;
	int		 fd;

	if ((fd = open_beneath(layerfd, path, O_RDONLY | O_DIRECTORY)) == -1)
		return;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (strncmp(de->d_name, ".cdm-write-", 11) == 0)
			continue;	/* a write in progress */
		if (!upper && listing_find(l, de->d_name) != NULL)
			continue;	/* shadowed or whited out by upper */
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == -1)
			continue;
		if (l->n == WS_FS_LIST_MAX) {
			l->truncated = 1;
			break;
		}
		if (l->n == l->cap) {
			l->cap = l->cap ? l->cap * 2 : 64;
			l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
		}
		l->v[l->n].name = xstrdup(de->d_name);
		l->v[l->n].hidden = upper && is_whiteout(&st);
		l->v[l->n].size = st.st_size;
		l->v[l->n].type = S_ISDIR(st.st_mode) ? 'd' : S_ISREG(st.st_mode) ?
		    'f' : S_ISLNK(st.st_mode) ? 'l' : 'o';
		l->n++;
	}
	closedir(d);
}

static int
entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ws_entry *)a)->name,
	    ((const struct ws_entry *)b)->name);
}

/* The merged directory at path; -1 with res set when it is not one. */
int
ws_fs_list(struct ws_fs *w, const char *path, struct ws_listing *l,
    struct tool_result *res)
{
	struct stat	st;
	enum ws_layer	layer;
	int		fd;

	memset(l, 0, sizeof(*l));
	if ((fd = ws_fs_resolve(w, path, &layer, &st, res)) == -1)
		return -1;
	close(fd);
	if (!S_ISDIR(st.st_mode)) {
		tool_fail(res, "'%.200s' is not a directory", *path ? path : ".");
		return -1;
	}
	if (layer == WS_UPPER)
		listing_add_layer(l, w->fd[WS_UPPER], path, 1);
	if (*path == '\0' || !upper_hides(w, path))
		listing_add_layer(l, w->fd[WS_LOWER], path, 0);
	if (l->n > 1)
		qsort(l->v, l->n, sizeof(*l->v), entry_cmp);
	return 0;
}
