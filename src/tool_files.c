/*
 * tool_files.c — read_file, write_file, edit_file, list_dir, search_files,
 * confined to the conversation's workspace. The workspace is an overlay's
 * two layers (workspace.h): reads see the upper layer, else the lower one
 * (a 0/0 character device in upper is a whiteout: deleted); writes copy up
 * into the upper layer only; listings merge both. Every path is checked as
 * text first (relative, no "..") and then resolved with openat2
 * RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS, so symlinks that lead out, /proc
 * magic links and escapes are refused by the kernel before any byte is read
 * or written; only regular files are ever opened for I/O. Writes walk
 * directories one component at a time with O_NOFOLLOW.
 *
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
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>

#include "app.h"
#include "sandbox.h"
#include "tools.h"
#include "util.h"
#include "workspace.h"

#define FILE_MAX	(4 * 1024 * 1024)	/* bytes read or written */
#define PATH_ARG_MAX	1024
#define LIST_MAX	2000			/* entries of one listing */
#define SEARCH_FILES	5000			/* files visited */
#define SEARCH_FILE_MAX	(1024 * 1024)		/* larger files are skipped */
#define SEARCH_RESULTS	200
#define SEARCH_DEPTH	24
#define SEARCH_LINE	300			/* bytes of a matching line shown */
#define PATTERN_MAX	1000

enum layer { UPPER, LOWER };

struct ws {
	int	fd[2];			/* O_PATH directory fds of the layers */
};

static const char *
arg_str(struct json_object *args, const char *key)
{
	struct json_object *v;

	if (json_object_object_get_ex(args, key, &v) &&
	    json_object_is_type(v, json_type_string))
		return json_object_get_string(v);
	return NULL;
}

static int
arg_int(struct json_object *args, const char *key, int def)
{
	struct json_object *v;

	if (json_object_object_get_ex(args, key, &v) &&
	    json_object_is_type(v, json_type_int))
		return (int)json_object_get_int64(v);
	return def;
}

/*
 * Fail closed like the shell: with isolation enabled, file tools run only
 * when the sandbox does, so they never show a view the shell cannot have.
 */
static int
ws_open(const struct tool_ctx *ctx, struct ws *w, struct tool_result *res)
{
	struct workspace	ws;
	char			reason[256];

	w->fd[UPPER] = w->fd[LOWER] = -1;
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
	w->fd[UPPER] = open(ws.upper, O_PATH | O_DIRECTORY | O_CLOEXEC);
	w->fd[LOWER] = open(ws.lower, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (w->fd[UPPER] == -1 || w->fd[LOWER] == -1) {
		tool_fail(res, "the workspace cannot be opened");
		if (w->fd[UPPER] != -1)
			close(w->fd[UPPER]);
		if (w->fd[LOWER] != -1)
			close(w->fd[LOWER]);
		return -1;
	}
	return 0;
}

static void
ws_close(struct ws *w)
{
	close(w->fd[UPPER]);
	close(w->fd[LOWER]);
}

/*
 * The text check before any I/O: relative, at most PATH_ARG_MAX bytes, no
 * "..". "" and "." mean the root. "./" prefixes and doubled slashes are
 * tolerated; the result is written to out without them.
 */
static int
path_check(const char *path, char *out, size_t outlen, struct tool_result *res)
{
	const char	*p = path, *slash;
	size_t		 o = 0, n;

	if (path == NULL)
		path = p = "";
	if (strlen(path) > PATH_ARG_MAX) {
		tool_fail(res, "the path is longer than %d bytes", PATH_ARG_MAX);
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
upper_hides(struct ws *w, const char *path)
{
	char		 prefix[PATH_ARG_MAX + 1];
	struct stat	 st;
	size_t		 i, n = strlen(path);
	int		 fd;

	for (i = 1; i <= n; i++) {
		if (i < n && path[i] != '/')
			continue;
		memcpy(prefix, path, i);
		prefix[i] = '\0';
		fd = open_beneath(w->fd[UPPER], prefix, O_PATH | O_NOFOLLOW);
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
static int
resolve(struct ws *w, const char *path, enum layer *layer, struct stat *st,
    struct tool_result *res)
{
	int fd, err;

	fd = open_beneath(w->fd[UPPER], path, O_PATH);
	if (fd != -1) {
		if (fstat(fd, st) == 0 && !is_whiteout(st)) {
			*layer = UPPER;
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
	if ((fd = open_beneath(w->fd[LOWER], path, O_PATH)) == -1) {
		resolve_fail(res, path, errno == ENOTDIR ? ENOENT : errno);
		return -1;
	}
	if (fstat(fd, st) == -1) {
		close(fd);
		resolve_fail(res, path, errno);
		return -1;
	}
	*layer = LOWER;
	return fd;
}

/*
 * The whole content of a regular file of the merged view (at most
 * FILE_MAX). The file is opened for reading only after the O_PATH
 * descriptor showed a regular file, and the second open must reach the same
 * inode, so a device or FIFO is never opened and a swap in between is seen.
 */
static int
read_whole(struct ws *w, const char *path, size_t max, char **out,
    size_t *outlen, struct tool_result *res)
{
	struct stat	 st, st2;
	enum layer	 layer;
	char		*buf;
	size_t		 len = 0;
	ssize_t		 r;
	int		 pfd, fd;

	if ((pfd = resolve(w, path, &layer, &st, res)) == -1)
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
upper_parent(struct ws *w, char *path, const char **base,
    struct tool_result *res)
{
	struct stat	 st;
	char		*p = path, *slash;
	int		 dfd, nfd;

	if ((dfd = dup(w->fd[UPPER])) == -1) {
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
write_upper(struct ws *w, const char *path, const char *data, size_t len,
    struct tool_result *res)
{
	struct stat	 st;
	char		 copy[PATH_ARG_MAX + 1], tmp[64], rid[ID_BUFSZ];
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

void
tool_read_file(const struct tool_ctx *ctx, struct json_object *args,
    struct tool_result *res)
{
	struct ws	 w;
	char		 path[PATH_ARG_MAX + 1], *buf, *p, *from, *to;
	size_t		 len;
	int		 start = arg_int(args, "start_line", 1);
	int		 end = arg_int(args, "end_line", 0), line;

	if (path_check(arg_str(args, "path"), path, sizeof(path), res) == -1 ||
	    ws_open(ctx, &w, res) == -1)
		return;
	if (read_whole(&w, path, FILE_MAX, &buf, &len, res) == -1) {
		ws_close(&w);
		return;
	}
	ws_close(&w);
	if (memchr(buf, '\0', len) != NULL) {
		free(buf);
		tool_fail(res, "'%s' is a binary file", path);
		return;
	}
	if (end != 0 && end < start) {
		free(buf);
		tool_fail(res, "end_line (%d) is before start_line (%d)", end,
		    start);
		return;
	}
	/* Cut to lines start..end (1-based, inclusive). */
	from = buf;
	for (line = 1, p = buf; line < start && p != NULL; line++)
		if ((p = memchr(p, '\n', len - (size_t)(p - buf))) != NULL)
			p++;
	if (p == NULL || (start > 1 && p == buf + len)) {
		free(buf);
		tool_fail(res, "'%s' has fewer than %d lines", path, start);
		return;
	}
	from = p;
	to = buf + len;
	if (end != 0) {
		for (; line <= end && p != NULL; line++)
			if ((p = memchr(p, '\n', len - (size_t)(p - buf))) != NULL)
				p++;
		if (p != NULL)
			to = p;
	}
	memmove(buf, from, (size_t)(to - from));
	buf[to - from] = '\0';
	res->ok = 1;
	tool_output(res, buf, (size_t)(to - from));
}

void
tool_write_file(const struct tool_ctx *ctx, struct json_object *args,
    struct tool_result *res)
{
	struct ws	 w;
	char		 path[PATH_ARG_MAX + 1];
	const char	*content = arg_str(args, "content");
	size_t		 len = content ? strlen(content) : 0;

	if (path_check(arg_str(args, "path"), path, sizeof(path), res) == -1)
		return;
	if (len > FILE_MAX) {
		tool_fail(res, "the content is larger than %d bytes", FILE_MAX);
		return;
	}
	if (ws_open(ctx, &w, res) == -1)
		return;
	if (write_upper(&w, path, content ? content : "", len, res) == 0) {
		char *o = xasprintf("wrote %zu bytes to %s", len, path);

		res->ok = 1;
		tool_output(res, o, strlen(o));
	}
	ws_close(&w);
}

static size_t
count_occurrences(const char *hay, const char *needle, const char **first)
{
	const char	*p = hay;
	size_t		 n = 0, nl = strlen(needle);

	*first = NULL;
	while ((p = strstr(p, needle)) != NULL) {
		if (n++ == 0)
			*first = p;
		p += nl;
	}
	return n;
}

void
tool_edit_file(const struct tool_ctx *ctx, struct json_object *args,
    struct tool_result *res)
{
	struct ws	 w;
	char		 path[PATH_ARG_MAX + 1], *buf, *out;
	const char	*old = arg_str(args, "old_text");
	const char	*new = arg_str(args, "new_text"), *at;
	size_t		 len, n, ol, nl;

	if (path_check(arg_str(args, "path"), path, sizeof(path), res) == -1)
		return;
	if (old == NULL || *old == '\0') {
		tool_fail(res, "old_text must not be empty");
		return;
	}
	if (ws_open(ctx, &w, res) == -1)
		return;
	if (read_whole(&w, path, FILE_MAX, &buf, &len, res) == -1)
		goto out;
	if (memchr(buf, '\0', len) != NULL) {
		tool_fail(res, "'%s' is a binary file", path);
		free(buf);
		goto out;
	}
	if ((n = count_occurrences(buf, old, &at)) != 1) {
		if (n == 0)
			tool_fail(res, "old_text does not occur in '%s'; "
			    "nothing was changed", path);
		else
			tool_fail(res, "old_text occurs %zu times in '%s'; "
			    "include more context so it matches once; nothing "
			    "was changed", n, path);
		free(buf);
		goto out;
	}
	ol = strlen(old);
	nl = strlen(new);
	if (len - ol + nl > FILE_MAX) {
		tool_fail(res, "the edited file would be larger than %d bytes",
		    FILE_MAX);
		free(buf);
		goto out;
	}
	out = xmalloc(len - ol + nl + 1);
	memcpy(out, buf, (size_t)(at - buf));
	memcpy(out + (at - buf), new, nl);
	memcpy(out + (at - buf) + nl, at + ol, len - (size_t)(at - buf) - ol);
	if (write_upper(&w, path, out, len - ol + nl, res) == 0) {
		char *o = xasprintf("edited %s: replaced %zu bytes with %zu",
		    path, ol, nl);

		res->ok = 1;
		tool_output(res, o, strlen(o));
	}
	free(out);
	free(buf);
out:
	ws_close(&w);
}

/* ------------------------------------------------------ merged listings */

struct entry {
	char	*name;
	char	 type;		/* 'd' directory, 'f' file, 'l' symlink, 'o' other */
	int	 hidden;	/* a whiteout: hides the lower entry */
	off_t	 size;
};

struct listing {
	struct entry	*v;
	size_t		 n, cap;
	int		 truncated;
};

static void
listing_free(struct listing *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i].name);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static struct entry *
listing_find(struct listing *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i].name, name) == 0)
			return &l->v[i];
	return NULL;
}

/* Add the entries of one layer's directory; upper first, then lower. */
static void
listing_add_layer(struct listing *l, int layerfd, const char *path, int upper)
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
		if (l->n == LIST_MAX) {
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
	return strcmp(((const struct entry *)a)->name,
	    ((const struct entry *)b)->name);
}

/* The merged directory at path; -1 with res set when it is not one. */
static int
listing_read(struct ws *w, const char *path, struct listing *l,
    struct tool_result *res)
{
	struct stat	st;
	enum layer	layer;
	int		fd;

	memset(l, 0, sizeof(*l));
	if ((fd = resolve(w, path, &layer, &st, res)) == -1)
		return -1;
	close(fd);
	if (!S_ISDIR(st.st_mode)) {
		tool_fail(res, "'%.200s' is not a directory", *path ? path : ".");
		return -1;
	}
	if (layer == UPPER)
		listing_add_layer(l, w->fd[UPPER], path, 1);
	if (*path == '\0' || !upper_hides(w, path))
		listing_add_layer(l, w->fd[LOWER], path, 0);
	if (l->n > 1)
		qsort(l->v, l->n, sizeof(*l->v), entry_cmp);
	return 0;
}

void
tool_list_dir(const struct tool_ctx *ctx, struct json_object *args,
    struct tool_result *res)
{
	struct listing	 l;
	struct ws	 w;
	char		 path[PATH_ARG_MAX + 1], *out = NULL;
	size_t		 i, len = 0, cap = 0, shown = 0;
	int		 n;

	if (path_check(arg_str(args, "path"), path, sizeof(path), res) == -1 ||
	    ws_open(ctx, &w, res) == -1)
		return;
	if (listing_read(&w, path, &l, res) == -1) {
		ws_close(&w);
		return;
	}
	ws_close(&w);
	for (i = 0; i < l.n; i++) {
		const struct entry *e = &l.v[i];

		if (e->hidden)
			continue;
		if (cap - len < strlen(e->name) + 64) {
			cap = cap * 2 + strlen(e->name) + 256;
			out = xrealloc(out, cap);
		}
		if (e->type == 'd')
			n = snprintf(out + len, cap - len, "%s/\n", e->name);
		else if (e->type == 'f')
			n = snprintf(out + len, cap - len, "%s (%lld bytes)\n",
			    e->name, (long long)e->size);
		else if (e->type == 'l')
			n = snprintf(out + len, cap - len, "%s (symlink)\n",
			    e->name);
		else
			n = snprintf(out + len, cap - len, "%s (special file)\n",
			    e->name);
		len += (size_t)n;
		shown++;
	}
	if (shown == 0)
		out = xasprintf("(empty directory)\n");
	else if (l.truncated) {
		out = xrealloc(out, len + 64);
		snprintf(out + len, 64, "[listing cut at %d entries]\n", LIST_MAX);
	}
	listing_free(&l);
	res->ok = 1;
	tool_output(res, out, strlen(out));
}

struct search {
	regex_t		 re;
	char		*out;
	size_t		 len, cap;
	int		 results, max_results;
	int		 files;
	int		 stopped;
};

static void
search_emit(struct search *s, const char *path, int lineno, const char *line,
    size_t linelen)
{
	size_t need = strlen(path) + SEARCH_LINE + 32;

	if (s->cap - s->len < need) {
		s->cap = s->cap * 2 + need;
		s->out = xrealloc(s->out, s->cap);
	}
	s->len += (size_t)snprintf(s->out + s->len, s->cap - s->len,
	    "%s:%d: %.*s%s\n", path, lineno,
	    (int)(linelen > SEARCH_LINE ? SEARCH_LINE : linelen), line,
	    linelen > SEARCH_LINE ? " [...]" : "");
	if (++s->results >= s->max_results)
		s->stopped = 1;
}

static void
search_file(struct search *s, struct ws *w, const char *path)
{
	struct tool_result	 ignore;
	char			*buf, *p, *nl, save;
	size_t			 len;
	int			 lineno = 0;

	memset(&ignore, 0, sizeof(ignore));
	if (++s->files > SEARCH_FILES) {
		s->stopped = 1;
		return;
	}
	if (read_whole(w, path, SEARCH_FILE_MAX, &buf, &len, &ignore) == -1)
		return;		/* too large or vanished: skipped */
	if (memchr(buf, '\0', len) == NULL) {
		for (p = buf; p < buf + len && !s->stopped; p = nl + 1) {
			lineno++;
			if ((nl = memchr(p, '\n', len - (size_t)(p - buf))) == NULL)
				nl = buf + len;
			save = *nl;
			*nl = '\0';
			if (regexec(&s->re, p, 0, NULL, 0) == 0)
				search_emit(s, path, lineno, p, (size_t)(nl - p));
			*nl = save;
		}
	}
	free(buf);
}

static void
search_dir(struct search *s, struct ws *w, const char *path, int depth)
{
	struct tool_result	 ignore;
	struct listing		 l;
	char			*child;
	size_t			 i;

	memset(&ignore, 0, sizeof(ignore));
	if (depth > SEARCH_DEPTH || listing_read(w, path, &l, &ignore) == -1)
		return;
	for (i = 0; i < l.n && !s->stopped; i++) {
		if (l.v[i].hidden || (l.v[i].type != 'f' && l.v[i].type != 'd'))
			continue;	/* symlinks are not followed */
		child = *path ? xasprintf("%s/%s", path, l.v[i].name) :
		    xstrdup(l.v[i].name);
		if (strlen(child) <= PATH_ARG_MAX) {
			if (l.v[i].type == 'd')
				search_dir(s, w, child, depth + 1);
			else
				search_file(s, w, child);
		}
		free(child);
	}
	listing_free(&l);
}

void
tool_search_files(const struct tool_ctx *ctx, struct json_object *args,
    struct tool_result *res)
{
	struct search	 s;
	struct stat	 st;
	struct ws	 w;
	enum layer	 layer;
	char		 path[PATH_ARG_MAX + 1], msg[128];
	const char	*pattern = arg_str(args, "pattern");
	int		 rc, fd;

	if (path_check(arg_str(args, "path"), path, sizeof(path), res) == -1)
		return;
	if (pattern == NULL || *pattern == '\0' || strlen(pattern) > PATTERN_MAX) {
		tool_fail(res, "pattern must be 1 to %d bytes", PATTERN_MAX);
		return;
	}
	memset(&s, 0, sizeof(s));
	s.max_results = arg_int(args, "max_results", SEARCH_RESULTS);
	if (s.max_results > SEARCH_RESULTS)
		s.max_results = SEARCH_RESULTS;
	if ((rc = regcomp(&s.re, pattern, REG_EXTENDED | REG_NOSUB |
	    REG_NEWLINE)) != 0) {
		regerror(rc, &s.re, msg, sizeof(msg));
		tool_fail(res, "the pattern is not a valid POSIX extended regular "
		    "expression: %s", msg);
		return;
	}
	if (ws_open(ctx, &w, res) == -1) {
		regfree(&s.re);
		return;
	}
	if ((fd = resolve(&w, path, &layer, &st, res)) != -1) {
		close(fd);
		if (S_ISDIR(st.st_mode))
			search_dir(&s, &w, path, 0);
		else if (S_ISREG(st.st_mode))
			search_file(&s, &w, path);
		else
			tool_fail(res, "refused: '%.200s' is not a regular file "
			    "or directory", path);
		if (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)) {
			res->ok = 1;
			if (s.results == 0)
				s.out = xasprintf("no matches\n");
			else if (s.stopped) {
				s.out = xrealloc(s.out, s.len + 80);
				snprintf(s.out + s.len, 80, "[search stopped at "
				    "%d results or %d files]\n", s.max_results,
				    SEARCH_FILES);
			}
			tool_output(res, s.out, strlen(s.out));
			s.out = NULL;
		}
	}
	free(s.out);
	ws_close(&w);
	regfree(&s.re);
}
