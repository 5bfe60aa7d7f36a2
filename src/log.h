/*
 * log.h — the server log: one line per request and leveled messages, to
 * <instance>/logs/codumentor.log (or stderr before it is open). Thread-safe;
 * log_reopen() is called from the main thread on SIGHUP for logrotate.
 * Never pass a token, a password or a request body to these functions.
 */
#ifndef CDM_LOG_H
#define CDM_LOG_H

enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR };

int	log_open(const char *path, enum log_level min);	/* 0 or -1 */
int	log_reopen(void);
void	log_close(void);
int	log_level_parse(const char *s, enum log_level *out);
void	log_msg(enum log_level lvl, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

#define log_debug(...)	log_msg(LOG_DEBUG, __VA_ARGS__)
#define log_info(...)	log_msg(LOG_INFO, __VA_ARGS__)
#define log_warn(...)	log_msg(LOG_WARN, __VA_ARGS__)
#define log_error(...)	log_msg(LOG_ERROR, __VA_ARGS__)

/* One access-log line: method, path (no query), status, duration, user id. */
void	log_request(const char *method, const char *path, int status,
	    double ms, const char *user_id);

#endif
