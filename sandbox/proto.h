/*
 * proto.h — the protocol between the server (src/sandbox_client.c) and the
 * sandbox helper (sandbox/helper.c), over a SOCK_SEQPACKET socketpair.
 *
 * One datagram is one message: a fixed header, then a JSON object of at most
 * SBX_BODY_MAX bytes. File descriptors (the command's stdout/stderr) travel
 * with the message as SCM_RIGHTS. Each side has one dispatch function, a
 * switch on the type; an unknown type is answered with SBX_ERROR, never
 * ignored. Sizes are checked before anything is copied or parsed.
 *
 *   helper -> server  HELLO    once, after the self-test:
 *                              {"available":b,"isolation":b,"reason":s,
 *                               "checks":[{"name":s,"ok":n,"detail":s}]}
 *   server -> helper  SPAWN    (id) {"profile":"shell","lower","upper",
 *                               "work","merged","argv":[s],"env":[[k,v]],
 *                               "net":b,"timeout_ms":n}
 *                              fds: 1 (stdout and stderr) or 2 (stdout, stderr)
 *   helper -> server  SPAWNED  (id) {"pid":n}         the command is starting
 *   helper -> server  EXITED   (id) {"started":b,"exit_code":n,"signal":n,
 *                               "timed_out":b,"killed":b,"error":s}
 *   server -> helper  KILL     (id) {}                 answered by EXITED
 *   server -> helper  FORGET   (id) {"upper"}          the server wrote into
 *                              that upper layer: a held overlay of it is
 *                              stale (sandbox/hold.c). No reply.
 *   server -> helper  PREPARE  (id) {"lower","upper","work","merged"}
 *                              a turn starts there: mount and hold the
 *                              overlay now, before its first command.
 *                              No reply.
 *   (SPAWN's optional "hold":b asks to keep the overlay mounted for the
 *   workspace's next command.)
 *
 * The helper's own children use the same framing on a socket of their
 * own until they exec: ERROR {"message"} for the setup step that failed,
 * NS {} with 2 fds (the user and mount namespaces of a new overlay).
 *   either way        ERROR    (id) {"message":s}      the request was refused
 *                              (nothing was started) or was not understood
 */
#ifndef CDM_SANDBOX_PROTO_H
#define CDM_SANDBOX_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define SBX_PROTO_VERSION	1

/* A shell command is one argv string; Linux caps one at 128 KiB anyway. */
#define SBX_BODY_MAX		(160 * 1024)
#define SBX_MAX_FDS		2
#define SBX_ARGV_MAX		4096		/* strings in argv */
#define SBX_ENV_MAX		64		/* extra variables of a run */
#define SBX_PATH_MAX		4096
#define SBX_REASON_MAX		512
#define SBX_CHECKS_MAX		8

/* The helper's own file descriptor for its end of the socketpair. */
#define SBX_HELPER_SOCK_FD	3

enum sbx_type {
	SBX_HELLO = 1,
	SBX_SPAWN,
	SBX_SPAWNED,
	SBX_EXITED,
	SBX_KILL,
	SBX_ERROR,
	SBX_FORGET,
	SBX_PREPARE,
	SBX_NS,
};

struct sbx_hdr {
	uint16_t	version;	/* SBX_PROTO_VERSION */
	uint16_t	type;		/* enum sbx_type */
	uint32_t	id;		/* request id chosen by the server; 0 for HELLO */
};

struct sbx_msg {
	struct sbx_hdr	hdr;
	char		body[SBX_BODY_MAX + 1];	/* NUL-terminated JSON */
	size_t		len;			/* of body, without the NUL */
	int		fds[SBX_MAX_FDS];
	int		nfds;
};

/*
 * Send one message (body may be NULL for "{}"); fds are not closed. 0, or -1
 * with errno (EMSGSIZE for a body over SBX_BODY_MAX).
 */
int	sbx_send(int sock, enum sbx_type type, uint32_t id, const char *body,
	    const int *fds, int nfds);

/*
 * Receive one message into m. 1 on a message, 0 when the peer closed, -1 on
 * error with errno: EBADMSG for a short, truncated, oversized or wrongly
 * versioned message, or one carrying more descriptors than allowed (those
 * are closed). Received descriptors are O_CLOEXEC; the caller owns them.
 */
int	sbx_recv(int sock, struct sbx_msg *m);

/* Close the descriptors a message carried. */
void	sbx_msg_close_fds(struct sbx_msg *m);

const char *sbx_type_name(unsigned type);

#endif
