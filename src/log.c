/*
 * log.c — the server log. Each line is written with one write(2) on an
 * O_APPEND descriptor, so lines from many threads never interleave and no lock
 * is held while writing. log_reopen() swaps the descriptor for logrotate.
 * It formats; it does not filter secrets — callers never pass them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

static atomic_int	 log_fd = 2;
static enum log_level	 log_min = LOG_INFO;
static char		 log_path[4096];

static const char *const level_names[] = { "debug", "info", "warn", "error" };

static int
open_log(const char *path)
{
	return open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
}

int
log_open(const char *path, enum log_level min)
{
	int fd;

	log_min = min;
	if (path == NULL)
		return 0;
	if ((fd = open_log(path)) == -1)
		return -1;
	strlcpy_(log_path, path, sizeof(log_path));
	fd = atomic_exchange(&log_fd, fd);
	if (fd > 2)
		close(fd);
	return 0;
}

int
log_reopen(void)
{
	int fd, old;

	if (log_path[0] == '\0')
		return 0;
	if ((fd = open_log(log_path)) == -1)
		return -1;
	old = atomic_exchange(&log_fd, fd);
	/*
	 * A thread may be inside write() on the old descriptor; closing it
	 * races only with that single line, which then lands in the rotated file
	 * or fails harmlessly. Delay the close a little to make that rare.
	 */
	if (old > 2) {
		usleep(10000);
		close(old);
	}
	return 0;
}

void
log_close(void)
{
	int fd = atomic_exchange(&log_fd, 2);

	if (fd > 2)
		close(fd);
	log_path[0] = '\0';
}

int
log_level_parse(const char *s, enum log_level *out)
{
	size_t i;

	for (i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++)
		if (strcmp(s, level_names[i]) == 0) {
			*out = (enum log_level)i;
			return 0;
		}
	return -1;
}

static void
log_write(const char *kind, const char *fmt, va_list ap)
{
	char	line[2048], ts[TIME_BUFSZ];
	int	n, m;

	time_rfc3339(ts, now_ms());
	n = snprintf(line, sizeof(line), "%s %s ", ts, kind);
	if (n < 0 || (size_t)n >= sizeof(line))
		return;
	m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	if (m < 0)
		return;
	n += m;
	if ((size_t)n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	/* One line each: a message never carries its own newlines into the log. */
	for (int i = 0; i < n; i++)
		if (line[i] == '\n' || line[i] == '\r')
			line[i] = ' ';
	line[n++] = '\n';
	(void)!write(atomic_load(&log_fd), line, (size_t)n);
}

void
log_msg(enum log_level lvl, const char *fmt, ...)
{
	va_list ap;

	if (lvl < log_min)
		return;
	va_start(ap, fmt);
	log_write(level_names[lvl], fmt, ap);
	va_end(ap);
}

static void
log_fmt(const char *kind, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_write(kind, fmt, ap);
	va_end(ap);
}

void
log_request(const char *method, const char *path, int status, double ms,
    const char *user_id)
{
	log_fmt("request", "%s %.512s %d %.3fms user=%s", method, path, status,
	    ms, user_id && *user_id ? user_id : "-");
}
