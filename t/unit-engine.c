/*
 * unit-engine.c — the engine's pure parts: the shell-words splitter and
 * approval rules (deny > ask > allow, allow never for shell syntax), and
 * history trimming (oldest tool outputs first, then oldest exchanges, never
 * the system prompt or the newest user message).
 */
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "tap.h"
#include "app.h"
#include "approvals.h"
#include "history.h"

static void
test_words(void)
{
	char	*w[8];
	int	 n, meta;

	n = shell_words("git  'log' \"--format=%H x\" a\\ b", w, 8, &meta);
	is_int(n, 4, "four words");
	is_str(w[1], "log", "single quotes removed");
	is_str(w[2], "--format=%H x", "double quotes keep spaces");
	is_str(w[3], "a b", "backslash escapes a space");
	ok(!meta, "no shell syntax");
	shell_words_free(w, n);
	n = shell_words("ls; rm -rf x", w, 8, &meta);
	ok(meta, "; is shell syntax");
	shell_words_free(w, n);
	n = shell_words("echo \"$(id)\"", w, 8, &meta);
	ok(meta, "$ inside double quotes is shell syntax");
	shell_words_free(w, n);
	n = shell_words("echo '$(id)'", w, 8, &meta);
	ok(!meta, "... but not inside single quotes");
	shell_words_free(w, n);
	is_int(shell_words("echo 'open", w, 8, &meta), -1, "unbalanced quote");
	is_int(shell_words("a b c d e f g h i", w, 8, &meta), -1, "too many words");
}

static void
test_rules(void)
{
	char by[APPROVAL_BY_MAX], err[256];

	config_defaults(&app.cfg);
	ok(approval_rules_load("deny curl; ask git push; allow git; allow ls",
	    err, sizeof(err)) == 0, "rules load");
	is_int(approval_by_rules("git status", by, sizeof(by)), APPROVAL_ALLOW, "allow git");
	is_str(by, "rule:allow git", "by names the rule");
	is_int(approval_by_rules("git push origin", by, sizeof(by)), APPROVAL_ASK,
	    "ask beats allow");
	is_int(approval_by_rules("curl http://x", by, sizeof(by)), APPROVAL_DENY, "deny");
	is_str(by, "rule:deny curl", "by the deny rule");
	is_int(approval_by_rules("ls && curl x", by, sizeof(by)), APPROVAL_DENY,
	    "deny after && too");
	is_int(approval_by_rules("ls; rm -rf /", by, sizeof(by)), APPROVAL_ASK,
	    "shell syntax: allow does not apply");
	is_int(approval_by_rules("ls $(rm -rf /)", by, sizeof(by)), APPROVAL_ASK,
	    "substitution: allow does not apply");
	is_int(approval_by_rules("lsblk", by, sizeof(by)), APPROVAL_ASK,
	    "a prefix is whole words");
	is_int(approval_by_rules("'ls' -l", by, sizeof(by)), APPROVAL_ALLOW,
	    "quoting does not dodge a rule");
	is_int(approval_by_rules("rm x", by, sizeof(by)), APPROVAL_ASK,
	    "no rule: ask (shell_always_allow false)");
	app.cfg.tools.shell_always_allow = true;
	is_int(approval_by_rules("rm x", by, sizeof(by)), APPROVAL_ALLOW,
	    "no rule, shell_always_allow: allow");
	is_str(by, "config:tools.shell_always_allow", "by the configuration");
	is_int(approval_by_rules("curl x", by, sizeof(by)), APPROVAL_DENY,
	    "deny still wins over shell_always_allow");
	ok(approval_rules_load("permit ls", err, sizeof(err)) == -1,
	    "an unknown action is refused");
	ok(strstr(err, "permit") != NULL, "naming it: %s", err);
	ok(approval_rules_load("allow ls; allow a|b", err, sizeof(err)) == -1,
	    "shell syntax in a rule is refused");
	ok(approval_rules_load("allow", err, sizeof(err)) == -1,
	    "an action without words is refused");
	approval_rules_free();
	config_free(&app.cfg);
}

static struct json_object *
msg(const char *role, const char *content)
{
	struct json_object *m = json_object_new_object();

	json_object_object_add(m, "role", json_object_new_string(role));
	json_object_object_add(m, "content", json_object_new_string(content));
	return m;
}

static const char *
content_at(struct json_object *a, size_t i)
{
	struct json_object *c;

	json_object_object_get_ex(json_object_array_get_idx(a, i), "content", &c);
	return json_object_get_string(c);
}

static void
test_trim(void)
{
	struct json_object	*a = json_object_new_array();
	char			*big = malloc(4001);
	size_t			 total, n;

	memset(big, 'x', 4000);
	big[4000] = '\0';
	json_object_array_add(a, msg("system", "SYSTEM"));
	json_object_array_add(a, msg("user", "first question"));
	json_object_array_add(a, msg("tool", big));		/* 2: old output */
	json_object_array_add(a, msg("assistant", "first answer"));
	json_object_array_add(a, msg("user", "second question"));
	json_object_array_add(a, msg("tool", big));		/* 5 */
	json_object_array_add(a, msg("assistant", "second answer"));
	json_object_array_add(a, msg("user", "NEWEST"));
	json_object_array_add(a, msg("tool", big));		/* 8: current */
	total = history_total(a);
	is_int(history_trim(a, total), total, "within budget: untouched");

	/* Room for all but about one big output. */
	total = history_trim(a, total - 900);
	ok(strlen(content_at(a, 2)) < 400, "the oldest tool output is shortened");
	ok(strstr(content_at(a, 2), "removed to fit the context window") != NULL,
	    "with a marker");
	is_int(strlen(content_at(a, 5)), 4000, "the next one is not, yet");
	is_int(json_object_array_length(a), 9, "no message dropped");

	/* Tighter: every tool output shortened, then exchanges dropped. */
	total = history_trim(a, 120);
	n = json_object_array_length(a);
	is_str(content_at(a, 0), "SYSTEM", "the system prompt stays");
	is_str(content_at(a, 1), "NEWEST", "older exchanges dropped, the newest user message stays");
	is_int(n, 3, "system, newest user message and its tool result remain");
	ok(strlen(content_at(a, 2)) < 400, "the newest tool output was shortened too");
	json_object_put(a);
	free(big);
}

int
main(void)
{
	test_words();
	test_rules();
	test_trim();
	return done_testing();
}
