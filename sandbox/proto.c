/*
 * proto.c — framing of the server <-> helper messages (proto.h): one
 * datagram per message, descriptors as SCM_RIGHTS. Both sides link it. It
 * checks sizes and the version and nothing else: the meaning of a body is
 * the business of each side's dispatch function.
 */
#include <sys/socket.h>
#include <sys/uio.h>

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "proto.h"

int
sbx_send(int sock, enum sbx_type type, uint32_t id, const char *body,
    const int *fds, int nfds)
{
	struct sbx_hdr	 hdr = { SBX_PROTO_VERSION, (uint16_t)type, id };
	struct iovec	 iov[2];
	struct msghdr	 mh;
	union {
		char		buf[CMSG_SPACE(sizeof(int) * SBX_MAX_FDS)];
		struct cmsghdr	align;
	} cm;
	struct cmsghdr	*c;
	size_t		 len;
	ssize_t		 n;

	if (body == NULL)
		body = "{}";
	len = strlen(body);
	if (len > SBX_BODY_MAX || nfds < 0 || nfds > SBX_MAX_FDS) {
		errno = EMSGSIZE;
		return -1;
	}
	iov[0].iov_base = &hdr;
	iov[0].iov_len = sizeof(hdr);
	iov[1].iov_base = (void *)body;
	iov[1].iov_len = len;
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = iov;
	mh.msg_iovlen = 2;
	if (nfds > 0) {
		memset(&cm, 0, sizeof(cm));
		mh.msg_control = cm.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
	}
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n == -1 && errno == EINTR);
	if (n == -1)
		return -1;
	if ((size_t)n != sizeof(hdr) + len) {
		errno = EMSGSIZE;	/* SEQPACKET sends all or nothing */
		return -1;
	}
	return 0;
}

void
sbx_msg_close_fds(struct sbx_msg *m)
{
	int i;

	for (i = 0; i < m->nfds; i++)
		if (m->fds[i] >= 0)
			close(m->fds[i]);
	m->nfds = 0;
}

/* Take the descriptors out of the control data; -1 if there are too many. */
static int
take_fds(struct msghdr *mh, struct sbx_msg *m)
{
	struct cmsghdr	*c;
	size_t		 n, i;
	int		 fd, bad = 0;

	for (c = CMSG_FIRSTHDR(mh); c != NULL; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) {
			bad = 1;
			continue;
		}
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < n; i++) {
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (m->nfds < SBX_MAX_FDS)
				m->fds[m->nfds++] = fd;
			else {
				close(fd);
				bad = 1;
			}
		}
	}
	return bad ? -1 : 0;
}

int
sbx_recv(int sock, struct sbx_msg *m)
{
	struct iovec	 iov[2];
	struct msghdr	 mh;
	union {
		char		buf[CMSG_SPACE(sizeof(int) * (SBX_MAX_FDS + 2))];
		struct cmsghdr	align;
	} cm;
	ssize_t		 n;

	m->nfds = 0;
	m->len = 0;
	iov[0].iov_base = &m->hdr;
	iov[0].iov_len = sizeof(m->hdr);
	iov[1].iov_base = m->body;
	iov[1].iov_len = SBX_BODY_MAX;
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = iov;
	mh.msg_iovlen = 2;
	mh.msg_control = cm.buf;
	mh.msg_controllen = sizeof(cm.buf);
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n == -1 && errno == EINTR);
	if (n == -1)
		return -1;
	if (n == 0 && mh.msg_controllen == 0)
		return 0;
	if (take_fds(&mh, m) == -1 || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
	    (size_t)n < sizeof(m->hdr) || m->hdr.version != SBX_PROTO_VERSION) {
		sbx_msg_close_fds(m);
		errno = EBADMSG;
		return -1;
	}
	m->len = (size_t)n - sizeof(m->hdr);
	m->body[m->len] = '\0';
	if (memchr(m->body, '\0', m->len) != NULL) {
		sbx_msg_close_fds(m);
		errno = EBADMSG;
		return -1;
	}
	return 1;
}

const char *
sbx_type_name(unsigned type)
{
	switch (type) {
	case SBX_HELLO:		return "HELLO";
	case SBX_SPAWN:		return "SPAWN";
	case SBX_SPAWNED:	return "SPAWNED";
	case SBX_EXITED:	return "EXITED";
	case SBX_KILL:		return "KILL";
	case SBX_ERROR:		return "ERROR";
	case SBX_FORGET:	return "FORGET";
	case SBX_PREPARE:	return "PREPARE";
	case SBX_NS:		return "NS";
	default:		return "unknown";
	}
}
