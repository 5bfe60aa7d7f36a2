/*
 * relay.h — the FastCGI relay behind `codumentor relay` (Apache mod_fcgid):
 * each connection accepted on the listening socket is joined to a fresh
 * connection to the resident server's socket and the bytes are pumped both
 * ways unchanged. The relay starts the resident server when nobody answers,
 * and answers 503 itself when that fails.
 */
#ifndef CDM_RELAY_H
#define CDM_RELAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct relay_opts {
	int		 listen_fd;	/* accept here (fd 0 under mod_fcgid) */
	const char	*upstream;	/* the resident server's unix socket */
	const char	*lock_path;	/* one starter at a time (flock) */
	const char	*exe;		/* program that serves: codumentor */
	char *const	*start_argv;	/* its argv; NULL: never start it */
	int		 start_timeout_ms; /* wait this long for the socket */
};

/* Serve connections until accept(2) fails for good; returns -1 then. */
int	relay_serve(const struct relay_opts *o);

/* Relay one accepted connection; the caller closes client_fd afterwards. */
void	relay_connection(const struct relay_opts *o, int client_fd);

/*
 * Record boundaries and the few facts the relay needs from a FastCGI byte
 * stream that it otherwise forwards untouched.
 */
struct fcgi_track {
	unsigned char	hdr[8];
	size_t		hlen;		/* header bytes collected so far */
	size_t		left;		/* content + padding left in the record */
	int		type;		/* of the current record */
	uint16_t	request_id;	/* of the first record seen */
	bool		have_id;
	bool		saw_stdout;	/* some FCGI_STDOUT content went by */
	bool		saw_end;	/* FCGI_END_REQUEST went by */
	bool		params_done;	/* the empty FCGI_PARAMS record */
	bool		stdin_done;	/* the empty FCGI_STDIN record */
};

void	fcgi_track_bytes(struct fcgi_track *t, const unsigned char *buf,
	    size_t n);
/* 1 when the stream ended exactly between two records. */
bool	fcgi_track_at_boundary(const struct fcgi_track *t);

/*
 * The FastCGI answer for REQUEST_ID with an HTTP status line, a JSON error
 * body {"error":{"code":CODE,"message":MESSAGE}}, the empty FCGI_STDOUT and
 * FCGI_END_REQUEST. Returns a malloc'ed buffer and its length in *len.
 */
unsigned char *fcgi_error_reply(uint16_t request_id, int status,
	    const char *code, const char *message, size_t *len);
/* The empty FCGI_STDOUT and FCGI_END_REQUEST that end a response. */
void	fcgi_end_records(uint16_t request_id, unsigned char out[24]);

#endif
