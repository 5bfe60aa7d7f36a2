/*
 * hold.c — overlays kept mounted between the commands of a conversation.
 *
 * Mounting a conversation's overlay in a fresh user+mount namespace is the
 * biggest part of a sandbox's start-up that is ours rather than bwrap's
 * (doc/performance.md "Sandbox spawn"): overlayfs re-checks its work
 * directory on every mount. So after the first command the helper keeps
 * the namespace pair open — two descriptors, no process — and the next
 * command of the same workspace joins it with setns() instead of mounting
 * again. Every sandbox still gets its own bwrap namespaces on top; only
 * the mount of the workspace layers is shared, which is what a second
 * mount of the same layers would show anyway.
 *
 * The server also asks for the mount ahead of need: PREPARE when a turn
 * starts, so its first command finds it ready (hold_prepare).
 *
 * A held overlay is only valid while nobody changes its layers behind its
 * back (overlayfs caches lookups), so it is dropped: after keep_ms without
 * a command; when the server says it wrote into the upper layer itself
 * (FORGET, after the file tools; hold_refresh mounts afresh at once, before
 * the next command can arrive); when a layer directory is no longer the one
 * that was mounted (device and inode, checked at every use) or the
 * workspace's layers-changed marker moved (src/workspace.h); when the
 * overlay is no longer mounted in it (the child checks after setns: the
 * kernel detaches a mount whose mount point is removed, which is what
 * gc-workspaces or an operator's rm -r does to merged/); and least
 * recently used first when HOLD_MAX are held. Dropping closes the
 * descriptors; the kernel unmounts once no sandbox is left inside.
 */
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "helper.h"

#define HOLD_MAX	64

struct held {
	char		*path[3];	/* lower, upper, work: the key */
	char		*merged;
	dev_t		 dev[3];
	ino_t		 ino[3];
	struct timespec	 mark;		/* of layers-changed; 0 when absent */
	struct ns_pair	 ns;
	int64_t		 used;		/* monotonic ms */
};

static struct held	held[HOLD_MAX];
static int64_t		keep_ms;

void
hold_init(int64_t keep)
{
	size_t i;

	keep_ms = keep;
	for (i = 0; i < HOLD_MAX; i++)
		held[i].ns.user = held[i].ns.mnt = -1;
}

int
hold_enabled(void)
{
	return keep_ms > 0;
}

static void
drop(struct held *h)
{
	int i;

	if (h->path[1] == NULL)
		return;
	close(h->ns.user);
	close(h->ns.mnt);
	for (i = 0; i < 3; i++)
		free(h->path[i]);
	free(h->merged);
	memset(h, 0, sizeof(*h));
	h->ns.user = h->ns.mnt = -1;
}

static const char *
layer(const struct spawn_req *r, int i)
{
	return i == 0 ? r->lower : i == 1 ? r->upper : r->work;
}

/*
 * The mtime of the workspace's layers-changed marker (src/workspace.h),
 * beside the upper layer; zero when there is none. Writers other than this
 * helper's sandboxes and the server's file tools (`codumentor sandbox run
 * --conversation`) touch it after they changed the layers.
 */
static struct timespec
mark_of(const char *upper)
{
	struct timespec	 zero = { 0, 0 };
	struct stat	 st;
	char		 path[SBX_PATH_MAX + 32];
	const char	*slash = strrchr(upper, '/');

	if (slash == NULL || (size_t)(slash - upper) >= SBX_PATH_MAX)
		return zero;
	snprintf(path, sizeof(path), "%.*s/layers-changed",
	    (int)(slash - upper), upper);
	if (lstat(path, &st) == -1)
		return zero;
	return st.st_mtim;
}

/* The device and inode of the three layers now; -1 if one is missing. */
static int
layers_stat(const struct spawn_req *r, dev_t *dev, ino_t *ino)
{
	struct stat	st;
	int		i;

	for (i = 0; i < 3; i++) {
		if (lstat(layer(r, i), &st) == -1 || !S_ISDIR(st.st_mode))
			return -1;
		dev[i] = st.st_dev;
		ino[i] = st.st_ino;
	}
	return 0;
}

/* The held overlay of this upper layer, or NULL. */
static struct held *
by_upper(const char *upper)
{
	size_t i;

	for (i = 0; i < HOLD_MAX; i++)
		if (held[i].path[1] != NULL && strcmp(held[i].path[1], upper) == 0)
			return &held[i];
	return NULL;
}

const struct ns_pair *
hold_find(const struct spawn_req *r)
{
	struct held	*h;
	struct timespec	 mark;
	dev_t		 dev[3];
	ino_t		 ino[3];
	int		 k, same;

	if ((h = by_upper(r->upper)) == NULL)
		return NULL;
	/* Same layers and mount point, same directories, marker unmoved. */
	same = strcmp(h->path[0], r->lower) == 0 &&
	    strcmp(h->path[2], r->work) == 0 &&
	    strcmp(h->merged, r->merged) == 0 && layers_stat(r, dev, ino) == 0;
	for (k = 0; same && k < 3; k++)
		same = dev[k] == h->dev[k] && ino[k] == h->ino[k];
	mark = mark_of(r->upper);
	if (!same || mark.tv_sec != h->mark.tv_sec ||
	    mark.tv_nsec != h->mark.tv_nsec) {
		drop(h);
		return NULL;
	}
	h->used = helper_now_ms();
	return &h->ns;
}

void
hold_add(const struct spawn_req *r, struct ns_pair ns)
{
	struct held	*h = NULL, *old = NULL;
	size_t		 i;
	int		 k;

	hold_forget(r->upper);
	for (i = 0; i < HOLD_MAX && h == NULL; i++) {
		if (held[i].path[1] == NULL)
			h = &held[i];
		else if (old == NULL || held[i].used < old->used)
			old = &held[i];
	}
	if (h == NULL) {
		drop(old);
		h = old;
	}
	if (layers_stat(r, h->dev, h->ino) == -1) {
		close(ns.user);
		close(ns.mnt);
		return;
	}
	for (k = 0; k < 3; k++)
		if ((h->path[k] = strdup(layer(r, k))) == NULL)
			abort();
	if ((h->merged = strdup(r->merged)) == NULL)
		abort();
	h->mark = mark_of(r->upper);
	h->ns = ns;
	h->used = helper_now_ms();
}

void
hold_forget(const char *upper)
{
	struct held *h;

	if ((h = by_upper(upper)) != NULL)
		drop(h);
}

void
hold_refresh(const struct helper_conf *c, const char *upper, int busy)
{
	struct spawn_req	 r;
	struct ns_pair		 ns;
	struct held		*h;
	char			 err[SBX_REASON_MAX];

	if ((h = by_upper(upper)) == NULL)
		return;
	/* The same layers, mounted afresh: keep the paths, drop the rest. */
	memset(&r, 0, sizeof(r));
	r.lower = helper_strdup(h->path[0]);
	r.upper = helper_strdup(h->path[1]);
	r.work = helper_strdup(h->path[2]);
	r.merged = helper_strdup(h->merged);
	drop(h);
	/*
	 * The old overlay is gone once its last descriptor closes (no
	 * sandbox is inside when not busy), so the new mount is the only
	 * one on these layers.
	 */
	if (!busy && spawn_prepare(c, &r, &ns, err, sizeof(err)) == 0)
		hold_add(&r, ns);
	spawn_req_free(&r);
}

void
hold_prepare(const struct helper_conf *c, const struct spawn_req *r)
{
	struct ns_pair	ns;
	char		err[SBX_REASON_MAX];

	if (hold_find(r) != NULL)
		return;
	if (spawn_prepare(c, r, &ns, err, sizeof(err)) == 0)
		hold_add(r, ns);
}

int
hold_expire(void)
{
	int64_t	now = helper_now_ms(), next = -1, left;
	size_t	i;

	for (i = 0; i < HOLD_MAX; i++) {
		if (held[i].path[1] == NULL)
			continue;
		left = held[i].used + keep_ms - now;
		if (left <= 0) {
			drop(&held[i]);
			continue;
		}
		if (next == -1 || left < next)
			next = left;
	}
	return next > 60000 ? 60000 : (int)next;
}

void
hold_clear(void)
{
	size_t i;

	for (i = 0; i < HOLD_MAX; i++)
		drop(&held[i]);
}
