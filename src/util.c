/*
 * util.c — random ids, time stamps, allocation and small string helpers used
 * by every layer. Allocation failure aborts: the server cannot do anything
 * useful without memory, and checking every small strdup hides real errors.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sodium.h>

#include "util.h"

void
random_id(char out[ID_BUFSZ])
{
	unsigned char	raw[16];
	char		b64[sodium_base64_ENCODED_LEN(16, sodium_base64_VARIANT_URLSAFE_NO_PADDING)];

	randombytes_buf(raw, sizeof(raw));
	sodium_bin2base64(b64, sizeof(b64), raw, sizeof(raw),
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	memcpy(out, b64, ID_LEN);
	out[ID_LEN] = '\0';
}

int
id_is_valid(const char *s)
{
	size_t i;

	for (i = 0; s[i] != '\0'; i++) {
		char c = s[i];
		if (i >= ID_LEN)
			return 0;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '_'))
			return 0;
	}
	return i == ID_LEN;
}

void
time_rfc3339(char out[TIME_BUFSZ], int64_t ms)
{
	time_t		t = (time_t)(ms / 1000);
	struct tm	tm;

	gmtime_r(&t, &tm);
	/* strftime: the compiler cannot bound tm fields printed with %d. */
	strftime(out, TIME_BUFSZ - 5, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + strlen(out), 6, ".%03uZ", (unsigned)(ms % 1000));
}

int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL)
		abort();
	return p;
}

void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (p == NULL)
		abort();
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (q == NULL)
		abort();
	return q;
}

char *
xstrdup(const char *s)
{
	char *p = strdup(s);

	if (p == NULL)
		abort();
	return p;
}

char *
xasprintf(const char *fmt, ...)
{
	va_list	 ap;
	char	*p;

	va_start(ap, fmt);
	if (vasprintf(&p, fmt, ap) < 0)
		abort();
	va_end(ap);
	return p;
}

size_t
strlcpy_(char *dst, const char *src, size_t size)
{
	size_t len = strlen(src);

	if (size > 0) {
		size_t n = len < size - 1 ? len : size - 1;
		memcpy(dst, src, n);
		dst[n] = '\0';
	}
	return len;
}

long long
parse_uint(const char *s, long long max)
{
	long long v = 0;

	if (s == NULL || *s == '\0')
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		if (v > (max - (*s - '0')) / 10)
			return -1;
		v = v * 10 + (*s - '0');
	}
	return v;
}

int
mkdir_p(const char *path, int mode)
{
	char	buf[4096];
	size_t	i, len = strlen(path);

	if (len == 0 || len >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/* Usually the parent is there (or the whole path): one call. */
	if (mkdir(path, (mode_t)mode) == 0 || errno == EEXIST)
		return 0;
	if (errno != ENOENT)
		return -1;
	memcpy(buf, path, len + 1);
	for (i = 1; i <= len; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, (mode_t)mode) == -1 && errno != EEXIST)
			return -1;
		buf[i] = (i == len) ? '\0' : '/';
	}
	return 0;
}
