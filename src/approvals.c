/*
 * approvals.c — the rules, the shell-words splitter they match with, and the
 * in-memory table of calls waiting for a decision. The splitter only takes
 * quoting apart so that "git 'status'" matches "allow git status"; it never
 * expands, globs or runs anything, and any syntax that could chain a second
 * command makes allow rules inapplicable. Storing decisions and publishing
 * approval.* events is the engine's.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app.h"
#include "approvals.h"
#include "util.h"

#define RULES_MAX	128
#define RULE_WORDS_MAX	16
#define WAIT_STEP_MS	200

struct rule {
	enum approval	 action;
	char		*words[RULE_WORDS_MAX];
	int		 n;
	char		 text[APPROVAL_BY_MAX - 8];	/* "allow git status" */
};

static struct rule	rules[RULES_MAX];	/* set at start, then read-only */
static size_t		nrules;

struct waiter {
	char		 conv_id[ID_BUFSZ];
	char		 call_id[72];
	int		 decided;
	int		 approve;
	char		 by[APPROVAL_BY_MAX];
	struct waiter	*next;
};

static pthread_mutex_t	wait_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t	wait_cv = PTHREAD_COND_INITIALIZER;
static struct waiter	*waiters;

void
shell_words_free(char **words, int n)
{
	int i;

	for (i = 0; i < n; i++)
		free(words[i]);
}

int
shell_words(const char *cmd, char **words, size_t max, int *meta)
{
	size_t	 len = strlen(cmd), o = 0;
	char	*cur = xmalloc(len + 1);
	int	 n = 0, inword = 0;
	char	 q = 0;
	const char *p;

	*meta = 0;
	for (p = cmd; *p != '\0'; p++) {
		char c = *p;

		if (q == '\'') {
			if (c == '\'')
				q = 0;
			else
				cur[o++] = c;
			continue;
		}
		if (q == '"') {
			if (c == '"')
				q = 0;
			else if (c == '$' || c == '`') {
				*meta = 1;
				cur[o++] = c;
			} else if (c == '\\' && p[1] != '\0' &&
			    strchr("\"\\$`\n", p[1]) != NULL)
				cur[o++] = *++p;
			else
				cur[o++] = c;
			continue;
		}
		if (c == '\'' || c == '"') {
			q = c;
			inword = 1;
			continue;
		}
		if (c == '\\') {
			if (p[1] == '\0')
				goto bad;
			if (p[1] == '\n')
				*meta = 1;
			cur[o++] = *++p;
			inword = 1;
			continue;
		}
		if (c == ' ' || c == '\t') {
			if (inword) {
				if ((size_t)n == max)
					goto bad;
				cur[o] = '\0';
				words[n++] = xstrdup(cur);
				o = 0;
				inword = 0;
			}
			continue;
		}
		/* Anything that chains, redirects, substitutes or expands. */
		if (strchr(";|&$`<>()\n\r{}*?[]~#!", c) != NULL)
			*meta = 1;
		cur[o++] = c;
		inword = 1;
	}
	if (q != 0)
		goto bad;
	if (inword) {
		if ((size_t)n == max)
			goto bad;
		cur[o] = '\0';
		words[n++] = xstrdup(cur);
	}
	free(cur);
	return n;
bad:
	free(cur);
	shell_words_free(words, n);
	return -1;
}

void
approval_rules_free(void)
{
	size_t i;

	for (i = 0; i < nrules; i++)
		shell_words_free(rules[i].words, rules[i].n);
	nrules = 0;
}

int
approval_rules_load(const char *spec, char *err, size_t errlen)
{
	char		*copy, *item, *save = NULL, *words[RULE_WORDS_MAX + 1];
	struct rule	*r;
	int		 n, meta, i;

	approval_rules_free();
	if (spec == NULL)
		return 0;
	copy = xstrdup(spec);
	for (item = strtok_r(copy, ";", &save); item != NULL;
	    item = strtok_r(NULL, ";", &save)) {
		n = shell_words(item, words, RULE_WORDS_MAX + 1, &meta);
		if (n == 0)
			continue;	/* "a;;b" or a trailing ';' */
		if (n < 2 || meta || nrules == RULES_MAX) {
			snprintf(err, errlen, "tools.approval_rules: '%.80s' is "
			    "not ACTION WORD..., where ACTION is deny, ask or "
			    "allow (at most %d rules of %d words, no shell "
			    "syntax)", item, RULES_MAX, RULE_WORDS_MAX);
			if (n > 0)
				shell_words_free(words, n);
			goto fail;
		}
		r = &rules[nrules];
		if (strcmp(words[0], "deny") == 0)
			r->action = APPROVAL_DENY;
		else if (strcmp(words[0], "ask") == 0)
			r->action = APPROVAL_ASK;
		else if (strcmp(words[0], "allow") == 0)
			r->action = APPROVAL_ALLOW;
		else {
			snprintf(err, errlen, "tools.approval_rules: '%.80s' "
			    "starts with '%.20s'; expected deny, ask or allow",
			    item, words[0]);
			shell_words_free(words, n);
			goto fail;
		}
		r->text[0] = '\0';
		for (i = 0; i < n; i++) {
			if (i > 0)
				strncat(r->text, " ", sizeof(r->text) -
				    strlen(r->text) - 1);
			strncat(r->text, words[i], sizeof(r->text) -
			    strlen(r->text) - 1);
		}
		free(words[0]);
		for (i = 1; i < n; i++)
			r->words[i - 1] = words[i];
		r->n = n - 1;
		nrules++;
	}
	free(copy);
	return 0;
fail:
	free(copy);
	approval_rules_free();
	return -1;
}

/* Does rule r match argv at position at (a prefix of argv[at..])? */
static int
rule_matches(const struct rule *r, char **argv, int argc, int at)
{
	int i;

	if (argc - at < r->n)
		return 0;
	for (i = 0; i < r->n; i++)
		if (strcmp(r->words[i], argv[at + i]) != 0)
			return 0;
	return 1;
}

/*
 * Deny rules match at the start and after anything that could begin
 * another command, so "ls; curl x" is still denied by "deny curl"; ask
 * and allow rules match the start only, and allow only a simple command.
 */
static const struct rule *
first_match(enum approval action, char **argv, int argc, int meta)
{
	size_t	i;
	int	at;

	for (i = 0; i < nrules; i++) {
		if (rules[i].action != action)
			continue;
		if (rule_matches(&rules[i], argv, argc, 0))
			return &rules[i];
		if (action != APPROVAL_DENY || !meta)
			continue;
		/* Crude on purpose: a deny may over-match, never under-match. */
		for (at = 0; at < argc; at++)
			if (rule_matches(&rules[i], argv, argc, at) ||
			    strstr(argv[at], rules[i].words[0]) != NULL)
				return &rules[i];
	}
	return NULL;
}

enum approval
approval_by_rules(const char *cmd, char *by, size_t bylen)
{
	const struct rule	*r;
	char			*argv[SHELL_WORDS_MAX];
	int			 argc, meta = 1;
	enum approval		 out;

	argc = shell_words(cmd, argv, SHELL_WORDS_MAX, &meta);
	if (argc < 0) {
		argc = 0;	/* unparseable: only the default can decide */
		meta = 1;
	}
	if ((r = first_match(APPROVAL_DENY, argv, argc, meta)) != NULL) {
		snprintf(by, bylen, "rule:%s", r->text);
		out = APPROVAL_DENY;
	} else if ((r = first_match(APPROVAL_ASK, argv, argc, meta)) != NULL) {
		snprintf(by, bylen, "rule:%s", r->text);
		out = APPROVAL_ASK;
	} else if (!meta &&
	    (r = first_match(APPROVAL_ALLOW, argv, argc, meta)) != NULL) {
		snprintf(by, bylen, "rule:%s", r->text);
		out = APPROVAL_ALLOW;
	} else if (app.cfg.tools.shell_always_allow) {
		snprintf(by, bylen, "config:tools.shell_always_allow");
		out = APPROVAL_ALLOW;
	} else {
		by[0] = '\0';
		out = APPROVAL_ASK;
	}
	shell_words_free(argv, argc);
	return out;
}

static struct waiter *
waiter_find(const char *conv_id, const char *call_id)
{
	struct waiter *w;

	for (w = waiters; w != NULL; w = w->next)
		if (strcmp(w->conv_id, conv_id) == 0 &&
		    strcmp(w->call_id, call_id) == 0)
			return w;
	return NULL;
}

void
approval_register(const char *conv_id, const char *call_id)
{
	struct waiter *w = xcalloc(1, sizeof(*w));

	strlcpy_(w->conv_id, conv_id, sizeof(w->conv_id));
	strlcpy_(w->call_id, call_id, sizeof(w->call_id));
	pthread_mutex_lock(&wait_mu);
	w->next = waiters;
	waiters = w;
	pthread_mutex_unlock(&wait_mu);
}

static void
waiter_unlink(struct waiter *w)
{
	struct waiter **pp;

	for (pp = &waiters; *pp != NULL; pp = &(*pp)->next)
		if (*pp == w) {
			*pp = w->next;
			break;
		}
}

enum approval_wait_result
approval_wait(const char *conv_id, const char *call_id, int timeout_s,
    volatile int *cancel, char *by, size_t bylen)
{
	struct waiter			*w;
	struct timespec			 ts;
	int64_t				 deadline = mono_ms() + (int64_t)timeout_s * 1000;
	enum approval_wait_result	 out;

	pthread_mutex_lock(&wait_mu);
	if ((w = waiter_find(conv_id, call_id)) == NULL) {
		pthread_mutex_unlock(&wait_mu);
		return WAIT_CANCELLED;
	}
	while (!w->decided) {
		if (cancel && *cancel)
			break;
		if (mono_ms() >= deadline) {
			/* The timeout decides like a user would, and first. */
			w->decided = 1;
			w->approve = 0;
			snprintf(w->by, sizeof(w->by), "timeout");
			break;
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += WAIT_STEP_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&wait_cv, &wait_mu, &ts);
	}
	if (w->decided) {
		out = w->approve ? WAIT_APPROVED : WAIT_DENIED;
		snprintf(by, bylen, "%s", w->by);
	} else
		out = WAIT_CANCELLED;
	waiter_unlink(w);
	pthread_mutex_unlock(&wait_mu);
	free(w);
	return out;
}

int
approval_submit(const char *conv_id, const char *call_id, int approve,
    const char *by)
{
	struct waiter	*w;
	int		 rc;

	pthread_mutex_lock(&wait_mu);
	if ((w = waiter_find(conv_id, call_id)) == NULL)
		rc = 1;
	else if (w->decided)
		rc = 2;
	else {
		w->decided = 1;
		w->approve = approve;
		snprintf(w->by, sizeof(w->by), "%s", by);
		pthread_cond_broadcast(&wait_cv);
		rc = 0;
	}
	pthread_mutex_unlock(&wait_mu);
	return rc;
}

void
approval_wake_all(void)
{
	pthread_mutex_lock(&wait_mu);
	pthread_cond_broadcast(&wait_cv);
	pthread_mutex_unlock(&wait_mu);
}
