/*
 * bus.h — the in-process live event bus. Each conversation with listeners has
 * a topic holding a ring of recent, already formatted SSE frames; publishing
 * appends to the ring and wakes every subscriber through its eventfd. The
 * event log in SQLite stays the source of truth: a subscriber that falls
 * behind the ring is told so and replays from the database.
 */
#ifndef CDM_BUS_H
#define CDM_BUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bus_frame {
	int64_t	 id;
	size_t	 len;
	int	 refs;		/* guarded by the bus lock */
	char	 data[];	/* the formatted SSE frame */
};

struct bus_sub;

void		 bus_init(void);
struct bus_sub	*bus_subscribe(const char *conv_id);
void		 bus_unsubscribe(struct bus_sub *sub);
/* Readable when frames (or a close) arrived since the last bus_take. */
int		 bus_fd(const struct bus_sub *sub);

enum bus_take_result { BUS_OK, BUS_BEHIND, BUS_CLOSED };
/*
 * Take up to max frames with id > after, oldest first, each with a reference
 * the caller drops with bus_frame_put(). BUS_BEHIND: the ring no longer holds
 * after + 1, replay from the log. BUS_CLOSED: the conversation was deleted.
 */
enum bus_take_result bus_take(struct bus_sub *sub, int64_t after,
		    struct bus_frame **out, size_t max, size_t *n);
void		 bus_frame_put(struct bus_frame *f);

/* Publish a formatted frame; the caller serialises publishers per topic. */
void		 bus_publish(const char *conv_id, int64_t id, const char *frame,
		    size_t len);
/* End every stream of a conversation (it was deleted). */
void		 bus_close(const char *conv_id);
int		 bus_subscriber_count(void);

#endif
