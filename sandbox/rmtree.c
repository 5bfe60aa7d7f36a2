/*
 * rmtree.c — descriptor-based recursive removal (rmtree.h). Every step is
 * relative to an open directory and uses O_NOFOLLOW / AT_SYMLINK_NOFOLLOW,
 * so a symlink planted in a workspace can never redirect the removal out of
 * it. It does not cross into other file systems' mounts specially: the
 * trees it removes are plain directories the helper created.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rmtree.h"

#define RMTREE_DEPTH_MAX	256	/* deeper trees are left, with ELOOP */

static void
count(struct rmtree_stats *s, const struct stat *st)
{
	if (s == NULL)
		return;
	s->files++;
	s->bytes += (uint64_t)st->st_blocks * 512;
}

/*
 * Open the directory NAME below dirfd for reading, making it 0700 first if
 * the sandbox left it without permissions. The chmod goes through an O_PATH
 * descriptor of the directory itself, so it cannot be redirected either.
 */
static int
open_dir(int parent, const char *name)
{
	char	path[64];
	int	fd, pfd;

	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd != -1 || errno != EACCES)
		return fd;
	pfd = openat(parent, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (pfd == -1)
		return -1;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", pfd);
	if (chmod(path, 0700) == -1) {
		close(pfd);
		errno = EACCES;
		return -1;
	}
	close(pfd);
	return openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

static int
remove_below(int parent, const char *name, int dry_run,
    struct rmtree_stats *s, int depth)
{
	struct dirent	*de;
	struct stat	 st;
	DIR		*d;
	int		 fd, rc = 0, saved = 0;

	if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode)) {
		count(s, &st);
		if (dry_run || unlinkat(parent, name, 0) == 0 || errno == ENOENT)
			return 0;
		return -1;
	}
	if (depth >= RMTREE_DEPTH_MAX) {
		errno = ELOOP;
		return -1;
	}
	if ((fd = open_dir(parent, name)) == -1)
		return -1;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return -1;
	}
	while ((errno = 0, de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (remove_below(dirfd(d), de->d_name, dry_run, s,
		    depth + 1) == -1 && rc == 0) {
			rc = -1;
			saved = errno;
		}
	}
	closedir(d);
	count(s, &st);
	if (!dry_run && unlinkat(parent, name, AT_REMOVEDIR) == -1 &&
	    errno != ENOENT && rc == 0) {
		rc = -1;
		saved = errno;
	}
	if (rc == -1)
		errno = saved;
	return rc;
}

int
rmtree_at(int at, const char *name, int dry_run, struct rmtree_stats *stats)
{
	return remove_below(at, name, dry_run, stats, 0);
}
