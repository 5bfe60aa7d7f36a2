/*
 * approvals.h — approval gating of model-written commands. Rules from
 * tools.approval_rules (deny, then ask, then allow, matched on the argv
 * prefix of the command split like a shell would, without evaluating
 * anything) decide first; what they leave open follows
 * tools.shell_always_allow (false: ask). A call that must be asked parks its
 * turn in approval_wait() until approval_submit() (the HTTP route), the
 * timeout, a cancel or shutdown.
 */
#ifndef CDM_APPROVALS_H
#define CDM_APPROVALS_H

#include <stddef.h>

#define APPROVAL_BY_MAX		160
#define SHELL_WORDS_MAX		256

enum approval { APPROVAL_ALLOW, APPROVAL_DENY, APPROVAL_ASK };

/* Parse "deny curl; ask git push; allow git status". 0, or -1 with err. */
int	approval_rules_load(const char *spec, char *err, size_t errlen);
void	approval_rules_free(void);

/*
 * Split cmd into words (quotes and backslashes removed, nothing expanded).
 * Returns the number of words (each malloc'd into words[]), or -1 when the
 * command cannot be split (unbalanced quotes, too many words). *meta is set
 * when cmd has unquoted shell syntax (; | & $ ` < > ( ) newline, or $ and `
 * inside double quotes) that makes it more than one simple command.
 */
int	shell_words(const char *cmd, char **words, size_t max, int *meta);
void	shell_words_free(char **words, int n);

/* What the rules and configuration say about cmd; by names the reason. */
enum approval approval_by_rules(const char *cmd, char *by, size_t bylen);

/* The outcome of a wait. */
enum approval_wait_result {
	WAIT_APPROVED,
	WAIT_DENIED,		/* by the user or the timeout (see by) */
	WAIT_CANCELLED,		/* the turn was cancelled or the server stops */
};

/*
 * Register the call as waiting. Call before approval.required is published,
 * so an answer can never arrive for an unknown call.
 */
void	approval_register(const char *conv_id, const char *call_id);
/* Wait for the decision of a registered call, then unregister it. */
enum approval_wait_result approval_wait(const char *conv_id,
	    const char *call_id, int timeout_s, volatile int *cancel,
	    char *by, size_t bylen);

/* 0 decided, 1 no such waiting call, 2 already decided. */
int	approval_submit(const char *conv_id, const char *call_id, int approve,
	    const char *by);
/* Wake every waiter (cancel flags were set, or the server stops). */
void	approval_wake_all(void);

#endif
