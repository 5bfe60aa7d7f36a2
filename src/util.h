/*
 * util.h — small helpers every layer uses: random ids, time stamps, bounded
 * string copies and allocation that aborts on exhaustion.
 */
#ifndef CDM_UTIL_H
#define CDM_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* 128 random bits as 22 base64url characters. */
#define ID_LEN		22
#define ID_BUFSZ	(ID_LEN + 1)
void	 random_id(char out[ID_BUFSZ]);
/* 1 when s looks like an id we could have issued (length and alphabet). */
int	 id_is_valid(const char *s);

/* RFC 3339 UTC with milliseconds: 2026-12-03T04:24:16.123Z */
#define TIME_BUFSZ	32
void	 time_rfc3339(char out[TIME_BUFSZ], int64_t unix_ms);
int64_t	 now_ms(void);		/* wall clock, ms since the epoch */
int64_t	 mono_ms(void);		/* monotonic clock, ms */
int64_t	 mono_us(void);		/* monotonic clock, µs */

void	*xmalloc(size_t n);
void	*xcalloc(size_t n, size_t size);
void	*xrealloc(void *p, size_t n);
char	*xstrdup(const char *s);
char	*xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* strlcpy semantics: returns strlen(src); truncation when >= size. */
size_t	 strlcpy_(char *dst, const char *src, size_t size);

/* Parse a non-negative decimal integer of at most max; -1 on any junk. */
long long parse_uint(const char *s, long long max);

/* mkdir -p with MODE for every created component; 0 or -1 (errno set). */
int	 mkdir_p(const char *path, int mode);

#endif
