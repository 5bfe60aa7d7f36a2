/*
 * sandbox_run.c — running commands through the sandbox helper (sandbox.h):
 * a SPAWN with the output pipe, followed until the helper reports the exit
 * (the output drained, the timeout and cancellation enforced from this
 * side too), and the notices that need no reply: PREPARE when a turn
 * starts, FORGET after the file tools wrote. The helper's process, its
 * socket and the routing of its replies are sandbox_client.c's.
 */
#include <sys/eventfd.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "app.h"
#include "log.h"
#include "proto.h"
#include "sandbox.h"
#include "sandbox_client.h"
#include "sandbox_setup.h"
#include "util.h"
#include "workspace.h"

#define REPLY_GRACE_MS		10000	/* past the timeout before we kill */
#define OUTPUT_CAP_DEFAULT	(64 * 1024)
/* Read what out_fd (non-blocking) holds now; 1 at its EOF. */
static int
drain(int out_fd, struct capture *c)
{
	char	buf[16384];
	ssize_t	n;

	for (;;) {
		n = read(out_fd, buf, sizeof(buf));
		if (n > 0)
			capture_add(c, buf, (size_t)n);
		else if (n == 0)
			return 1;
		else if (errno != EINTR)
			return errno != EAGAIN;
	}
}

/*
 * Send SPAWN with body and fds (then close sent_fd, our copy of the write
 * end, or the output would never end), then follow the request until it
 * ends: read the command's output from out_fd (if not -1), kill it on
 * cancel or when the helper overstays the timeout, and fill res.
 *
 * The request ends with the helper's EXITED, not with the output's EOF:
 * the command's own writes were in the pipe before it exited, so one last
 * drain gets all of them. Waiting for the EOF would wait for bwrap's pid 1
 * and its namespaces to be torn down (about half a millisecond per
 * command); what is not written by then comes from background processes
 * that die with the sandbox.
 */
static int
run_request(const char *body, const int *fds, int nfds, int sent_fd,
    int out_fd, int timeout_ms, size_t cap, volatile int *cancel,
    struct sandbox_result *res)
{
	struct waiter	 w;
	struct capture	 c;
	struct pollfd	 pfd[2];
	int64_t		 start = mono_ms(), kill_at, give_up = 0;
	int		 eof = out_fd < 0, kill_sent = 0, cancelled = 0, rc = -1;
	int		 npfd;
	eventfd_t	 ev;
	ssize_t		 n;

	memset(&w, 0, sizeof(w));
	memset(&c, 0, sizeof(c));
	if ((w.wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) == -1) {
		snprintf(res->error, sizeof(res->error), "eventfd: %s",
		    strerror(errno));
		goto out;
	}
	if (out_fd >= 0) {
		(void)fcntl(out_fd, F_SETFL, fcntl(out_fd, F_GETFL) | O_NONBLOCK);
		c.head_cap = cap / 2;
		c.tail_cap = cap - c.head_cap;
		c.head = xmalloc(c.head_cap + 1);
		c.tail = xmalloc(c.tail_cap + 1);
	}
	kill_at = timeout_ms > 0 ? start + timeout_ms + REPLY_GRACE_MS : 0;

	if (sbx_waiter_add(&w, res->error, sizeof(res->error)) == -1)
		goto out;
	n = sbx_send_locked(SBX_SPAWN, w.id, body, fds, nfds);
	if (sent_fd >= 0) {
		close(sent_fd);
		sent_fd = -1;
	}
	if (n == -1) {
		snprintf(res->error, sizeof(res->error), "cannot reach the "
		    "sandbox helper: %s", strerror(errno));
		sbx_waiter_remove(&w);
		goto out;
	}
	for (;;) {
		int64_t now = mono_ms();

		if (sbx_waiter_done(&w, give_up && now > give_up)) {
			if (!eof)
				eof = drain(out_fd, &c);
			break;
		}
		if (!kill_sent && ((cancel != NULL && *cancel) ||
		    (kill_at && now > kill_at))) {
			cancelled = cancel != NULL && *cancel;
			(void)sbx_send_locked(SBX_KILL, w.id, NULL, NULL, 0);
			kill_sent = 1;
			give_up = now + REPLY_GRACE_MS;
		}
		pfd[0].fd = w.wake;
		pfd[0].events = POLLIN;
		pfd[1].fd = out_fd;
		pfd[1].events = POLLIN;
		npfd = eof ? 1 : 2;
		/* 100 ms: the cancel flag is polled, not signalled. */
		if (poll(pfd, (nfds_t)npfd, 100) <= 0)
			continue;
		if (pfd[0].revents)
			(void)eventfd_read(w.wake, &ev);
		if (npfd == 2 && pfd[1].revents)
			eof = drain(out_fd, &c);
	}
	if (out_fd >= 0)
		capture_finish(&c, res);
	res->cancelled = cancelled;
	if (w.refused) {
		snprintf(res->error, sizeof(res->error), "%s", w.error);
	} else if (w.exited && !w.started) {
		/* bwrap itself failed: its own message is the output. */
		snprintf(res->error, sizeof(res->error), "sandbox setup failed: "
		    "%.200s", res->output && *res->output ? res->output :
		    w.error);
	} else if (!w.exited) {
		res->started = w.spawned;
		snprintf(res->error, sizeof(res->error), "%s",
		    w.dead ? "the sandbox helper exited during the command" :
		    "the sandbox helper did not report the command's end");
	} else {
		res->started = 1;
		res->exit_code = w.signal ? -1 : w.exit_code;
		res->signal = w.signal;
		res->timed_out = w.timed_out;
		res->cancelled = cancelled || (w.killed && !w.timed_out &&
		    cancel != NULL && *cancel);
		rc = 0;
	}
out:
	if (sent_fd >= 0)
		close(sent_fd);
	if (w.wake >= 0)
		close(w.wake);
	free(c.head);
	free(c.tail);
	return rc;
}

int
sandbox_run(const struct sandbox_run *run, struct sandbox_result *res)
{
	struct workspace	 ws;
	char			*body;
	int			 p[2], rc;

	memset(res, 0, sizeof(*res));
	if (!sandbox_available(res->error, sizeof(res->error)))
		return -1;
	if (run->argv == NULL || run->argv[0] == NULL) {
		snprintf(res->error, sizeof(res->error), "no command");
		return -1;
	}
	if (workspace_ensure(run->conversation_id, &ws) == -1) {
		snprintf(res->error, sizeof(res->error), "the conversation's "
		    "workspace cannot be created: %s", strerror(errno));
		return -1;
	}
	(void)workspace_touch(&ws);
	body = sbx_spawn_body(ws.lower, ws.upper, ws.work, ws.merged, run->argv,
	    run->env, run->nenv, !app.cfg.sandbox.unshare_net, 1,
	    run->timeout_ms);
	if (strlen(body) > SBX_BODY_MAX) {
		free(body);
		snprintf(res->error, sizeof(res->error), "the command is longer "
		    "than %d bytes", SBX_BODY_MAX);
		return -1;
	}
	if (pipe2(p, O_CLOEXEC) == -1) {
		free(body);
		snprintf(res->error, sizeof(res->error), "pipe: %s",
		    strerror(errno));
		return -1;
	}
	rc = run_request(body, &p[1], 1, p[1], p[0], run->timeout_ms,
	    run->output_cap > 0 ? run->output_cap : OUTPUT_CAP_DEFAULT,
	    run->cancel, res);
	close(p[0]);
	free(body);
	return rc;
}

static void
send_notice(enum sbx_type type, uint32_t id, struct json_object *o)
{
	/*
	 * Ordered before any later SPAWN on the same socket. If the send
	 * fails the helper is gone, and nothing will run at all.
	 */
	if (sbx_send_locked(type, id, json_object_to_json_string_ext(o,
	    JSON_C_TO_STRING_PLAIN), NULL, 0) == -1)
		log_error("sandbox helper: %s: %s", sbx_type_name(type),
		    strerror(errno));
	json_object_put(o);
}

void
sandbox_forget(const char *conversation_id)
{
	struct json_object	*o;
	struct workspace	 ws;
	uint32_t		 id;

	if (workspace_paths(conversation_id, &ws) == -1 ||
	    (id = sbx_notice_id()) == 0)
		return;
	o = json_object_new_object();
	json_object_object_add(o, "upper", json_object_new_string(ws.upper));
	send_notice(SBX_FORGET, id, o);
}

void
sandbox_prepare(const char *conversation_id)
{
	struct json_object	*o;
	struct workspace	 ws;
	uint32_t		 id;

	if ((id = sbx_notice_id()) == 0 ||
	    workspace_ensure(conversation_id, &ws) == -1)
		return;		/* the command will say why, if one comes */
	(void)workspace_touch(&ws);
	o = json_object_new_object();
	json_object_object_add(o, "lower", json_object_new_string(ws.lower));
	json_object_object_add(o, "upper", json_object_new_string(ws.upper));
	json_object_object_add(o, "work", json_object_new_string(ws.work));
	json_object_object_add(o, "merged", json_object_new_string(ws.merged));
	send_notice(SBX_PREPARE, id, o);
}

int
sandbox_run_direct(const struct sandbox_direct *d, struct sandbox_result *res)
{
	char	*body;
	int	 fds[2] = { d->out_fd, d->err_fd }, rc;

	memset(res, 0, sizeof(*res));
	if (!sandbox_available(res->error, sizeof(res->error)))
		return -1;
	body = sbx_spawn_body(d->lower, d->upper, d->work, d->merged, d->argv,
	    NULL, 0, d->net, 0, d->timeout_ms);
	if (strlen(body) > SBX_BODY_MAX) {
		free(body);
		snprintf(res->error, sizeof(res->error), "the command is longer "
		    "than %d bytes", SBX_BODY_MAX);
		return -1;
	}
	rc = run_request(body, fds, 2, -1, -1, d->timeout_ms, 0, NULL, res);
	free(body);
	return rc;
}

void
sandbox_result_free(struct sandbox_result *res)
{
	free(res->output);
	res->output = NULL;
}
