/*
 * bus.c — topics, rings and subscribers behind one mutex. The lock is held
 * only to move pointers and bump counters; frames are written to sockets by
 * the subscribers' own threads after they have let go of it. Topics exist
 * only while someone listens, so a conversation nobody watches costs nothing.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include "bus.h"
#include "util.h"

#define RING		1024	/* frames kept per watched conversation */
#define BUCKETS		1024

struct bus_topic {
	char		  conv_id[ID_BUFSZ + 8];
	struct bus_topic *next;		/* hash chain */
	struct bus_sub	 *subs;
	int		  nsubs;
	bool		  closed;
	struct bus_frame *ring[RING];
	size_t		  head;		/* index of the oldest frame */
	size_t		  count;
};

struct bus_sub {
	struct bus_topic *topic;
	struct bus_sub	 *next, *prev;
	int		  efd;
	bool		  signaled;	/* woken and not yet taken */
};

static pthread_mutex_t	 bus_mu = PTHREAD_MUTEX_INITIALIZER;
static struct bus_topic	*buckets[BUCKETS];
static int		 nsubscribers;

static size_t
hash(const char *s)
{
	size_t h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h % BUCKETS;
}

static struct bus_topic *
topic_find(const char *conv_id, struct bus_topic ***slot)
{
	struct bus_topic **pp = &buckets[hash(conv_id)];

	for (; *pp != NULL; pp = &(*pp)->next)
		if (strcmp((*pp)->conv_id, conv_id) == 0)
			break;
	if (slot)
		*slot = pp;
	return *pp;
}

static void
frame_put_locked(struct bus_frame *f)
{
	if (--f->refs == 0)
		free(f);
}

void
bus_frame_put(struct bus_frame *f)
{
	pthread_mutex_lock(&bus_mu);
	frame_put_locked(f);
	pthread_mutex_unlock(&bus_mu);
}

/*
 * Wake each subscriber that is not already awake. A turn publishes several
 * events in a burst; with thousands of streams, one eventfd write per
 * subscriber per burst instead of per event is most of a publish's cost.
 */
static void
wake(struct bus_topic *t)
{
	struct bus_sub	*s;
	uint64_t	 one = 1;

	for (s = t->subs; s != NULL; s = s->next) {
		if (s->signaled)
			continue;
		s->signaled = true;
		(void)!write(s->efd, &one, sizeof(one));
	}
}

void
bus_init(void)
{
	memset(buckets, 0, sizeof(buckets));
}

struct bus_sub *
bus_subscribe(const char *conv_id)
{
	struct bus_sub		 *s;
	struct bus_topic	 *t, **slot;
	int			  efd;

	if ((efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) == -1)
		return NULL;
	s = xcalloc(1, sizeof(*s));
	s->efd = efd;
	pthread_mutex_lock(&bus_mu);
	if ((t = topic_find(conv_id, &slot)) == NULL) {
		t = xcalloc(1, sizeof(*t));
		strlcpy_(t->conv_id, conv_id, sizeof(t->conv_id));
		*slot = t;
	}
	s->topic = t;
	s->next = t->subs;
	if (t->subs)
		t->subs->prev = s;
	t->subs = s;
	t->nsubs++;
	nsubscribers++;
	pthread_mutex_unlock(&bus_mu);
	return s;
}

void
bus_unsubscribe(struct bus_sub *s)
{
	struct bus_topic	*t, **slot;
	size_t			 i;

	if (s == NULL)
		return;
	pthread_mutex_lock(&bus_mu);
	t = s->topic;
	if (s->prev)
		s->prev->next = s->next;
	else
		t->subs = s->next;
	if (s->next)
		s->next->prev = s->prev;
	nsubscribers--;
	if (--t->nsubs == 0) {
		topic_find(t->conv_id, &slot);
		if (*slot == t)
			*slot = t->next;
		for (i = 0; i < t->count; i++)
			frame_put_locked(t->ring[(t->head + i) % RING]);
		free(t);
	}
	pthread_mutex_unlock(&bus_mu);
	close(s->efd);
	free(s);
}

int
bus_fd(const struct bus_sub *s)
{
	return s->efd;
}

enum bus_take_result
bus_take(struct bus_sub *s, int64_t after, struct bus_frame **out, size_t max,
    size_t *n)
{
	struct bus_topic	*t;
	uint64_t		 v;
	size_t			 i;
	enum bus_take_result	 rc = BUS_OK;

	*n = 0;
	(void)!read(s->efd, &v, sizeof(v));	/* reset the wake-up count */
	pthread_mutex_lock(&bus_mu);
	/* From here on a publish wakes us again; what is in the ring now we take. */
	s->signaled = false;
	t = s->topic;
	if (t->closed) {
		rc = BUS_CLOSED;
		goto out;
	}
	if (t->count == 0)
		goto out;
	/* The ring starts after the subscriber's position: it missed frames. */
	if (t->ring[t->head]->id > after + 1) {
		rc = BUS_BEHIND;
		goto out;
	}
	for (i = 0; i < t->count && *n < max; i++) {
		struct bus_frame *f = t->ring[(t->head + i) % RING];

		if (f->id <= after)
			continue;
		f->refs++;
		out[(*n)++] = f;
	}
	/* More than max waiting: make sure the caller comes back. */
	if (i < t->count) {
		uint64_t one = 1;

		s->signaled = true;
		(void)!write(s->efd, &one, sizeof(one));
	}
out:
	pthread_mutex_unlock(&bus_mu);
	return rc;
}

void
bus_publish(const char *conv_id, int64_t id, const char *frame, size_t len)
{
	struct bus_topic	*t;
	struct bus_frame	*f;

	pthread_mutex_lock(&bus_mu);
	if ((t = topic_find(conv_id, NULL)) == NULL) {
		pthread_mutex_unlock(&bus_mu);
		return;
	}
	f = xmalloc(sizeof(*f) + len + 1);
	f->id = id;
	f->len = len;
	f->refs = 1;
	memcpy(f->data, frame, len);
	f->data[len] = '\0';
	if (t->count == RING) {
		frame_put_locked(t->ring[t->head]);
		t->head = (t->head + 1) % RING;
		t->count--;
	}
	t->ring[(t->head + t->count) % RING] = f;
	t->count++;
	wake(t);
	pthread_mutex_unlock(&bus_mu);
}

void
bus_close(const char *conv_id)
{
	struct bus_topic *t;

	pthread_mutex_lock(&bus_mu);
	if ((t = topic_find(conv_id, NULL)) != NULL) {
		t->closed = true;
		wake(t);
	}
	pthread_mutex_unlock(&bus_mu);
}

int
bus_subscriber_count(void)
{
	int n;

	pthread_mutex_lock(&bus_mu);
	n = nsubscribers;
	pthread_mutex_unlock(&bus_mu);
	return n;
}
