/*
 * unit-config.c — config.c against real files: defaults, a full file, each
 * kind of error with its file and line, --set overrides, the environment
 * secret, "~/" expansion, and the shipped conf-examples/codumentor.yaml.
 * It does not test how the server uses the values.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "tap.h"

static char	tmp_path[64];
static char	err[512];

/* Write text to a fresh file under /tmp; its name is in tmp_path. */
static const char *
write_tmp(const char *text)
{
	size_t	len = strlen(text);
	int	fd;

	snprintf(tmp_path, sizeof(tmp_path), "/tmp/unit-config-XXXXXX");
	if ((fd = mkstemp(tmp_path)) == -1) {
		perror("mkstemp");
		exit(1);
	}
	if (write(fd, text, len) != (ssize_t)len) {
		perror("write");
		exit(1);
	}
	close(fd);
	return tmp_path;
}

/* Load text over the defaults; 0 or -1 with err set. The file is removed. */
static int
load_text(struct config *cfg, const char *text)
{
	const char	*path = write_tmp(text);
	int		 rc;

	config_defaults(cfg);
	err[0] = '\0';
	rc = config_load_file(cfg, path, err, sizeof(err));
	unlink(path);
	return rc;
}

/* The error of loading text, with the temporary path replaced by "F". */
static const char *
load_error_of(const char *text)
{
	static char	 out[512];
	struct config	 cfg;
	size_t		 plen;

	if (load_text(&cfg, text) == 0) {
		config_free(&cfg);
		return "(no error)";
	}
	config_free(&cfg);
	plen = strlen(tmp_path);
	if (strncmp(err, tmp_path, plen) == 0)
		snprintf(out, sizeof(out), "F%s", err + plen);
	else
		snprintf(out, sizeof(out), "%s", err);
	return out;
}

static const char *
set_error_of(const char *assignment)
{
	struct config cfg;

	config_defaults(&cfg);
	err[0] = '\0';
	if (config_set(&cfg, assignment, err, sizeof(err)) == 0)
		snprintf(err, sizeof(err), "(no error)");
	config_free(&cfg);
	return err;
}

static void
test_defaults(void)
{
	struct config			 cfg;
	const struct llm_profile	*p;

	config_defaults(&cfg);
	ok(config_finish(&cfg, err, sizeof(err)) == 0, "defaults finish: %s", err);
	ok(cfg.path == NULL, "no path without a file");
	is_str(cfg.instance_dir, "/var/lib/codumentor", "instance_dir");
	is_str(cfg.listen, "unix:/run/codumentor/fcgi.sock", "listen");
	is_int(cfg.server.workers, 16, "server.workers");
	is_int(cfg.server.max_streams, 4096, "server.max_streams");
	is_int(cfg.server.heartbeat_seconds, 15, "server.heartbeat_seconds");
	is_int(cfg.server.max_body_bytes, 1048576, "server.max_body_bytes");
	is_int(cfg.server.shutdown_grace_seconds, 10, "server.shutdown_grace_seconds");
	is_str(cfg.server.socket_group, "", "server.socket_group");
	is_str(cfg.server.socket_mode, "0660", "server.socket_mode");
	is_str(cfg.log.level, "info", "log.level");
	is_str(cfg.log.file, "/var/lib/codumentor/logs/codumentor.log",
	    "log.file defaults below instance_dir");
	is_str(cfg.auth.jwt_secret, "", "auth.jwt_secret");
	is_int(cfg.auth.n_previous_jwt_secrets, 0, "auth.previous_jwt_secrets");
	is_int(cfg.auth.token_ttl_minutes, 720, "auth.token_ttl_minutes");
	is_int(cfg.auth.login_max_failures, 5, "auth.login_max_failures");
	is_int(cfg.auth.login_lockout_seconds, 60, "auth.login_lockout_seconds");
	is_str(cfg.llm.default_profile, "default", "llm.default_profile");
	is_int(cfg.llm.n_profiles, 1, "one profile");
	p = config_profile(&cfg, "default");
	ok(p != NULL, "profile 'default' exists");
	if (p != NULL) {
		is_str(p->base_url, "http://127.0.0.1:8000/v1", "default base_url");
		is_str(p->model, "", "default model");
		is_str(p->api_key_env, "", "default api_key_env");
		is_int(p->context_window, 32768, "default context_window");
		is_int(p->max_output_tokens, 4096, "default max_output_tokens");
		ok(p->temperature > 0.199 && p->temperature < 0.201,
		    "default temperature");
	}
	ok(config_profile(&cfg, NULL) == p, "NULL names the default profile");
	ok(config_profile(&cfg, "nope") == NULL, "unknown profile is NULL");
	ok(!cfg.tools.shell_always_allow, "tools.shell_always_allow");
	is_int(cfg.tools.approval_timeout_seconds, 600,
	    "tools.approval_timeout_seconds");
	ok(cfg.workspace_isolation.enabled, "workspace_isolation.enabled");
	is_str(cfg.workspace_isolation.base_dir,
	    "/home/tester/.codumentor/workspaces", "base_dir: ~ expanded");
	is_int(cfg.workspace_isolation.ttl_days, 30, "workspace_isolation.ttl_days");
	ok(cfg.sandbox.unshare_net, "sandbox.unshare_net");
	is_str(cfg.sandbox.seccomp, "default", "sandbox.seccomp");
	config_free(&cfg);
}

static const char full_file[] =
    "# every key, none at its default\n"
    "instance_dir: /srv/cdm\n"
    "listen: 127.0.0.1:9000\n"
    "server:\n"
    "  workers: 4\n"
    "  max_streams: 100\n"
    "  heartbeat_seconds: 5\n"
    "  max_body_bytes: 2048\n"
    "  shutdown_grace_seconds: 0\n"
    "  socket_group: www-data\n"
    "  socket_mode: \"0600\"\n"
    "log:\n"
    "  level: debug\n"
    "  file: /var/log/cdm.log\n"
    "auth:\n"
    "  jwt_secret: \"s3cret-from-file\"\n"
    "  previous_jwt_secrets: [old1, \"old2\"]\n"
    "  token_ttl_minutes: 60\n"
    "  login_max_failures: 3\n"
    "  login_lockout_seconds: 120\n"
    "llm:\n"
    "  default_profile: fast\n"
    "  profiles:\n"
    "    fast:\n"
    "      base_url: https://llm.example/v1\n"
    "      model: qwen2.5-coder\n"
    "      api_key_env: FAST_KEY\n"
    "      context_window: 8192\n"
    "      max_output_tokens: 1024\n"
    "      temperature: 0\n"
    "    big.one:\n"
    "      model: \"big\"\n"
    "tools:\n"
    "  shell_always_allow: true\n"
    "  approval_timeout_seconds: 30\n"
    "workspace_isolation:\n"
    "  enabled: false\n"
    "  base_dir: /srv/ws\n"
    "  ttl_days: 7\n"
    "sandbox:\n"
    "  unshare_net: false\n"
    "  seccomp: enforce\n";

static void
test_full_file(void)
{
	struct config			 cfg;
	const struct llm_profile	*p;

	ok(load_text(&cfg, full_file) == 0, "full file loads: %s", err);
	ok(config_finish(&cfg, err, sizeof(err)) == 0, "full file finishes: %s",
	    err);
	is_str(cfg.path, tmp_path, "path remembered");
	is_str(cfg.instance_dir, "/srv/cdm", "instance_dir");
	is_str(cfg.listen, "127.0.0.1:9000", "listen HOST:PORT");
	is_int(cfg.server.workers, 4, "server.workers");
	is_int(cfg.server.max_streams, 100, "server.max_streams");
	is_int(cfg.server.heartbeat_seconds, 5, "server.heartbeat_seconds");
	is_int(cfg.server.max_body_bytes, 2048, "server.max_body_bytes");
	is_int(cfg.server.shutdown_grace_seconds, 0, "shutdown_grace_seconds 0");
	is_str(cfg.server.socket_group, "www-data", "server.socket_group");
	is_str(cfg.server.socket_mode, "0600", "server.socket_mode");
	is_str(cfg.log.level, "debug", "log.level");
	is_str(cfg.log.file, "/var/log/cdm.log", "log.file kept");
	is_str(cfg.auth.jwt_secret, "s3cret-from-file", "auth.jwt_secret");
	is_int(cfg.auth.n_previous_jwt_secrets, 2, "two previous secrets");
	if (cfg.auth.n_previous_jwt_secrets == 2) {
		is_str(cfg.auth.previous_jwt_secrets[0], "old1", "previous[0]");
		is_str(cfg.auth.previous_jwt_secrets[1], "old2", "previous[1]");
	}
	is_int(cfg.auth.token_ttl_minutes, 60, "auth.token_ttl_minutes");
	is_int(cfg.auth.login_max_failures, 3, "auth.login_max_failures");
	is_int(cfg.auth.login_lockout_seconds, 120, "auth.login_lockout_seconds");
	is_str(cfg.llm.default_profile, "fast", "llm.default_profile");
	is_int(cfg.llm.n_profiles, 2, "file's profiles replace the default set");
	ok(config_profile(&cfg, "default") == NULL, "no 'default' profile left");
	p = config_profile(&cfg, NULL);
	ok(p != NULL && strcmp(p->name, "fast") == 0, "default is 'fast'");
	if (p != NULL) {
		is_str(p->base_url, "https://llm.example/v1", "fast base_url");
		is_str(p->model, "qwen2.5-coder", "fast model");
		is_str(p->api_key_env, "FAST_KEY", "fast api_key_env");
		is_int(p->context_window, 8192, "fast context_window");
		is_int(p->max_output_tokens, 1024, "fast max_output_tokens");
		ok(p->temperature == 0.0, "fast temperature 0");
	}
	p = config_profile(&cfg, "big.one");
	ok(p != NULL, "profile name with a dot");
	if (p != NULL) {
		is_str(p->model, "big", "big.one model");
		is_str(p->base_url, "http://127.0.0.1:8000/v1",
		    "missing field takes the default");
		is_int(p->context_window, 32768, "missing int takes the default");
	}
	ok(cfg.tools.shell_always_allow, "tools.shell_always_allow");
	is_int(cfg.tools.approval_timeout_seconds, 30,
	    "tools.approval_timeout_seconds");
	ok(!cfg.workspace_isolation.enabled, "workspace_isolation.enabled");
	is_str(cfg.workspace_isolation.base_dir, "/srv/ws", "base_dir");
	is_int(cfg.workspace_isolation.ttl_days, 7, "ttl_days");
	ok(!cfg.sandbox.unshare_net, "sandbox.unshare_net");
	is_str(cfg.sandbox.seccomp, "enforce", "sandbox.seccomp");
	config_free(&cfg);
}

static void
test_file_errors(void)
{
	struct config cfg;

	is_str(load_error_of("server:\n  workers: 4\n  wrokers: 8\n"),
	    "F:3: unknown key 'server.wrokers'", "unknown key, its line");
	is_str(load_error_of("# c\n\nlisten: unix:/x\nbogus: 1\n"),
	    "F:4: unknown key 'bogus'", "unknown top-level key");
	is_str(load_error_of("server.workers: 4\n"),
	    "F:1: unknown key 'server.workers'", "dotted key in the file");
	is_str(load_error_of("llm:\n  profiles:\n    a:\n      modle: x\n"),
	    "F:4: unknown key 'llm.profiles.a.modle'", "unknown profile field");
	is_str(load_error_of("server:\n  workers: abc\n"),
	    "F:2: key 'server.workers': expected an integer between 1 and 1024",
	    "string for an int");
	is_str(load_error_of("server:\n\n  workers: 2000\n"),
	    "F:3: key 'server.workers': expected an integer between 1 and 1024",
	    "int out of range");
	is_str(load_error_of("server:\n  workers: 0\n"),
	    "F:2: key 'server.workers': expected an integer between 1 and 1024",
	    "int below range");
	is_str(load_error_of("server:\n  workers: \"4\"\n"),
	    "F:2: key 'server.workers': expected an integer between 1 and 1024",
	    "quoted int is a string");
	is_str(load_error_of("server:\n  workers: 4.5\n"),
	    "F:2: key 'server.workers': expected an integer between 1 and 1024",
	    "fraction for an int");
	is_str(load_error_of("server:\n  workers:\n"),
	    "F:2: key 'server.workers': expected an integer between 1 and 1024",
	    "empty int");
	is_str(load_error_of("server:\n  max_body_bytes: 99999999999999999999\n"),
	    "F:2: key 'server.max_body_bytes': expected an integer between "
	    "1024 and 1073741824", "overflowing long");
	is_str(load_error_of("tools:\n  shell_always_allow: yes\n"),
	    "F:2: key 'tools.shell_always_allow': expected true or false",
	    "bool as yes");
	is_str(load_error_of("tools:\n  shell_always_allow: 1\n"),
	    "F:2: key 'tools.shell_always_allow': expected true or false",
	    "bool as 1");
	is_str(load_error_of("log:\n  level: verbose\n"),
	    "F:2: key 'log.level': expected one of debug|info|warn|error",
	    "enum");
	is_str(load_error_of("sandbox:\n  seccomp: audit\n"),
	    "F:2: key 'sandbox.seccomp': expected one of default|enforce|off",
	    "seccomp mode");
	is_str(load_error_of("server:\n  socket_mode: \"0680\"\n"),
	    "F:2: key 'server.socket_mode': expected an octal mode from 0000 "
	    "to 0777, such as \"0660\"", "socket_mode not octal");
	is_str(load_error_of("server:\n  socket_mode: \"1777\"\n"),
	    "F:2: key 'server.socket_mode': expected an octal mode from 0000 "
	    "to 0777, such as \"0660\"", "socket_mode above 0777");
	is_str(load_error_of("listen: localhost\n"),
	    "F:1: key 'listen': expected unix:/PATH (at most 107 bytes) or "
	    "HOST:PORT", "listen without port");
	is_str(load_error_of("listen: unix:run/x.sock\n"),
	    "F:1: key 'listen': expected unix:/PATH (at most 107 bytes) or "
	    "HOST:PORT", "relative unix path");
	is_str(load_error_of("llm:\n  profiles:\n    a:\n      temperature: 3\n"),
	    "F:4: key 'llm.profiles.a.temperature': expected a number between "
	    "0 and 2", "double out of range");
	is_str(load_error_of("llm:\n  profiles:\n    a:\n      base_url: ftp://x\n"),
	    "F:4: key 'llm.profiles.a.base_url': expected an http:// or "
	    "https:// URL", "base_url scheme");
	is_str(load_error_of("llm:\n  profiles:\n    \"a b\": {}\n"),
	    "F:3: key 'llm.profiles.a b': a profile name is 1 to 64 of "
	    "A-Z a-z 0-9 . _ -", "bad profile name");
	is_str(load_error_of("llm:\n  profiles: fast\n"),
	    "F:2: key 'llm.profiles': expected a mapping of profile names to "
	    "profiles", "profiles as a scalar");
	is_str(load_error_of("auth:\n  previous_jwt_secrets: old\n"),
	    "F:2: key 'auth.previous_jwt_secrets': expected a list of at most "
	    "16 non-empty strings", "list as a scalar");
	is_str(load_error_of("auth:\n  previous_jwt_secrets:\n    - a\n    - [b]\n"),
	    "F:4: key 'auth.previous_jwt_secrets': expected a list of at most "
	    "16 non-empty strings", "list of a list, item's line");
	is_str(load_error_of("server: 4\n"),
	    "F:1: key 'server': expected a mapping", "section as a scalar");
	is_str(load_error_of("instance_dir: [a]\n"),
	    "F:1: key 'instance_dir': expected a string of at most 4096 bytes",
	    "list for a string");
	is_str(load_error_of("server:\n  workers: 2\nlog: {}\n"
	    "server:\n  max_streams: 1\n"),
	    "F:4: duplicate key 'server'", "duplicate section");
	is_str(load_error_of("log:\n  level: info\n  level: warn\n"),
	    "F:3: duplicate key 'log.level'", "duplicate key");
	is_str(load_error_of("- a\n- b\n"),
	    "F:1: expected a mapping of keys at the top", "top-level list");
	is_str(load_error_of("listen: unix:/a\n---\nlisten: unix:/b\n"),
	    "F:3: a second YAML document; the configuration is one document",
	    "two documents");

	/* Syntax errors: the file, the line and libyaml's words. */
	is_str(load_error_of("server:\n  workers: 4\n max_streams: 5\n"),
	    "F:3: YAML syntax error: did not find expected key (while "
	    "parsing a block mapping on line 1)", "bad indentation, its line");
	is_str(load_error_of("auth:\n  previous_jwt_secrets: [a, b\nlog: {}\n"),
	    "F:3: YAML syntax error: did not find expected ',' or ']' (while "
	    "parsing a flow sequence on line 2)", "unclosed flow list");
	is_str(load_error_of("listen: \"unix:/a\n"),
	    "F:2: YAML syntax error: found unexpected end of stream (while "
	    "scanning a quoted scalar on line 1)", "unclosed quote");
	is_str(load_error_of("a: 1\nb: \xff\n"),
	    "F:2: YAML syntax error: invalid leading UTF-8 octet",
	    "invalid UTF-8, its line");

	config_defaults(&cfg);
	ok(config_load_file(&cfg, "/nonexistent/cdm.yaml", err,
	    sizeof(err)) == -1, "missing file is an error");
	is_str(err, "/nonexistent/cdm.yaml: No such file or directory",
	    "missing file message");
	ok(config_load_file(&cfg, "/tmp", err, sizeof(err)) == -1,
	    "a directory is an error");
	is_str(err, "/tmp: not a regular file", "directory message");
	config_free(&cfg);
}

static void
test_empty_files(void)
{
	struct config cfg;

	ok(load_text(&cfg, "") == 0, "empty file loads: %s", err);
	ok(config_finish(&cfg, err, sizeof(err)) == 0, "empty file finishes");
	is_int(cfg.server.workers, 16, "empty file: defaults");
	is_int(cfg.llm.n_profiles, 1, "empty file: default profile");
	config_free(&cfg);

	ok(load_text(&cfg, "# only a comment\n\n") == 0,
	    "comment-only file loads: %s", err);
	is_str(cfg.listen, "unix:/run/codumentor/fcgi.sock",
	    "comment-only file: defaults");
	config_free(&cfg);

	ok(load_text(&cfg, "---\n...\n") == 0, "empty document loads: %s", err);
	config_free(&cfg);

	ok(load_text(&cfg, "server:\nlog:\n  level: warn\n") == 0,
	    "empty section is allowed: %s", err);
	is_str(cfg.log.level, "warn", "keys after an empty section");
	config_free(&cfg);

	ok(load_text(&cfg, "auth:\n  previous_jwt_secrets: [x]\n  "
	    "jwt_secret:\nserver:\n  socket_group: ~\n") == 0,
	    "null strings and lists: %s", err);
	is_str(cfg.auth.jwt_secret, "", "null string is empty");
	is_str(cfg.server.socket_group, "", "~ string is empty");
	config_free(&cfg);
}

static void
test_set(void)
{
	struct config			 cfg;
	const struct llm_profile	*p;

	config_defaults(&cfg);
	ok(config_set(&cfg, "server.workers=3", err, sizeof(err)) == 0,
	    "--set int: %s", err);
	is_int(cfg.server.workers, 3, "int set");
	ok(config_set(&cfg, "server.max_body_bytes=1073741824", err,
	    sizeof(err)) == 0, "--set long: %s", err);
	is_int(cfg.server.max_body_bytes, 1073741824L, "long set");
	ok(config_set(&cfg, "sandbox.unshare_net=false", err, sizeof(err)) == 0,
	    "--set bool: %s", err);
	ok(!cfg.sandbox.unshare_net, "bool set");
	ok(config_set(&cfg, "listen=[::1]:8080", err, sizeof(err)) == 0,
	    "--set listen IPv6: %s", err);
	is_str(cfg.listen, "[::1]:8080", "listen set");
	ok(config_set(&cfg, "server.socket_mode=600", err, sizeof(err)) == 0,
	    "--set mode: %s", err);
	is_str(cfg.server.socket_mode, "0600", "mode stored as four digits");
	ok(config_set(&cfg, "auth.jwt_secret=#not-a-comment=x", err,
	    sizeof(err)) == 0, "--set secret: %s", err);
	is_str(cfg.auth.jwt_secret, "#not-a-comment=x", "value taken verbatim");
	ok(config_set(&cfg, "auth.previous_jwt_secrets=a,b,c", err,
	    sizeof(err)) == 0, "--set list: %s", err);
	is_int(cfg.auth.n_previous_jwt_secrets, 3, "list of three");
	if (cfg.auth.n_previous_jwt_secrets == 3)
		is_str(cfg.auth.previous_jwt_secrets[2], "c", "list item");
	ok(config_set(&cfg, "auth.previous_jwt_secrets=", err, sizeof(err)) == 0,
	    "--set empty list: %s", err);
	is_int(cfg.auth.n_previous_jwt_secrets, 0, "list emptied");
	ok(config_set(&cfg, "llm.profiles.default.temperature=1.5", err,
	    sizeof(err)) == 0, "--set profile double: %s", err);
	ok(config_set(&cfg, "llm.profiles.local.model=m1", err,
	    sizeof(err)) == 0, "--set creates a profile: %s", err);
	ok(config_set(&cfg, "llm.profiles.local.context_window=1000", err,
	    sizeof(err)) == 0, "--set second field: %s", err);
	ok(config_set(&cfg, "llm.default_profile=local", err, sizeof(err)) == 0,
	    "--set default_profile: %s", err);
	is_int(cfg.llm.n_profiles, 2, "default profile kept, one added");
	p = config_profile(&cfg, "default");
	ok(p != NULL && p->temperature == 1.5, "profile double set");
	p = config_profile(&cfg, NULL);
	ok(p != NULL && strcmp(p->name, "local") == 0, "new default profile");
	if (p != NULL) {
		is_str(p->model, "m1", "new profile model");
		is_int(p->context_window, 1000, "new profile context_window");
		is_int(p->max_output_tokens, 4096, "new profile default field");
	}
	ok(config_set(&cfg, "log.file=", err, sizeof(err)) == 0,
	    "--set empty string: %s", err);
	ok(config_finish(&cfg, err, sizeof(err)) == 0, "finish after sets: %s",
	    err);
	config_free(&cfg);

	is_str(set_error_of("server.workers=abc"),
	    "--set server.workers=abc: expected an integer between 1 and 1024",
	    "--set int error");
	is_str(set_error_of("server.workers="),
	    "--set server.workers=: expected an integer between 1 and 1024",
	    "--set empty int");
	is_str(set_error_of("tools.shell_always_allow=yes"),
	    "--set tools.shell_always_allow=yes: expected true or false",
	    "--set bool error");
	is_str(set_error_of("server.wrokers=8"),
	    "--set server.wrokers=(hidden): unknown key 'server.wrokers'",
	    "--set unknown key");
	is_str(set_error_of("server=8"),
	    "--set server=(hidden): unknown key 'server'", "--set a section");
	is_str(set_error_of("workers"),
	    "--set workers: expected KEY=VALUE", "--set without =");
	is_str(set_error_of("llm.profiles=x"),
	    "--set llm.profiles=x: set one field at a time: "
	    "llm.profiles.NAME.FIELD=VALUE", "--set the whole profile map");
	is_str(set_error_of("llm.profiles.x.modle=m"),
	    "--set llm.profiles.x.modle=(hidden): unknown key "
	    "'llm.profiles.x.modle'",
	    "--set unknown profile field");
	is_str(set_error_of("llm.profiles.x.temperature=hot"),
	    "--set llm.profiles.x.temperature=hot: expected a number between "
	    "0 and 2", "--set profile double error");
	is_str(set_error_of("llm.profiles.a/b.model=m"),
	    "--set llm.profiles.a/b.model=m: a profile name is 1 to 64 of "
	    "A-Z a-z 0-9 . _ -", "--set bad profile name");
	is_str(set_error_of("auth.previous_jwt_secrets=a,,b"),
	    "--set auth.previous_jwt_secrets=(hidden): expected a list of at "
	    "most 16 non-empty strings", "--set list error hides secrets");
	is_str(set_error_of("auth.jwt_secrte=hunter2"),
	    "--set auth.jwt_secrte=(hidden): unknown key 'auth.jwt_secrte'",
	    "--set unknown key hides the value");
	is_str(set_error_of("sandbox.seccomp=strict"),
	    "--set sandbox.seccomp=strict: expected one of default|enforce|off",
	    "--set enum error");

	/* A rejected profile field does not leave a half-made profile. */
	config_defaults(&cfg);
	ok(config_set(&cfg, "llm.profiles.x.context_window=0", err,
	    sizeof(err)) == -1, "--set bad value for a new profile");
	is_int(cfg.llm.n_profiles, 1, "no profile created");
	config_free(&cfg);
}

static void
test_finish(void)
{
	struct config cfg;

	config_defaults(&cfg);
	setenv("CODUMENTOR_JWT_SECRET", "from-env", 1);
	config_set(&cfg, "auth.jwt_secret=from-set", err, sizeof(err));
	ok(config_finish(&cfg, err, sizeof(err)) == 0, "finish: %s", err);
	is_str(cfg.auth.jwt_secret, "from-env",
	    "CODUMENTOR_JWT_SECRET beats the file and --set");
	config_free(&cfg);

	config_defaults(&cfg);
	setenv("CODUMENTOR_JWT_SECRET", "", 1);
	config_set(&cfg, "auth.jwt_secret=from-set", err, sizeof(err));
	config_finish(&cfg, err, sizeof(err));
	is_str(cfg.auth.jwt_secret, "from-set",
	    "an empty CODUMENTOR_JWT_SECRET is ignored");
	config_free(&cfg);
	unsetenv("CODUMENTOR_JWT_SECRET");

	ok(load_text(&cfg, "instance_dir: ~/cdm\nworkspace_isolation:\n"
	    "  base_dir: \"~\"\n") == 0, "~ paths load: %s", err);
	ok(config_finish(&cfg, err, sizeof(err)) == 0, "~ paths finish: %s",
	    err);
	is_str(cfg.instance_dir, "/home/tester/cdm", "~/ expanded");
	is_str(cfg.log.file, "/home/tester/cdm/logs/codumentor.log",
	    "log.file follows the expanded instance_dir");
	is_str(cfg.workspace_isolation.base_dir, "/home/tester",
	    "\"~\" alone (a plain ~ is YAML's null)");
	config_free(&cfg);

	config_defaults(&cfg);
	config_set(&cfg, "log.file=~/x.log", err, sizeof(err));
	config_set(&cfg, "instance_dir=/a/~b", err, sizeof(err));
	ok(config_finish(&cfg, err, sizeof(err)) == 0, "finish: %s", err);
	is_str(cfg.log.file, "/home/tester/x.log", "log.file ~ expanded");
	is_str(cfg.instance_dir, "/a/~b", "a ~ not leading is kept");
	config_free(&cfg);

	config_defaults(&cfg);
	config_set(&cfg, "instance_dir=~root/x", err, sizeof(err));
	ok(config_finish(&cfg, err, sizeof(err)) == -1, "~user refused");
	is_str(err, "key 'instance_dir': only \"~/\" is expanded, not \"~user\"",
	    "~user message");
	config_free(&cfg);

	config_defaults(&cfg);
	config_set(&cfg, "instance_dir=", err, sizeof(err));
	ok(config_finish(&cfg, err, sizeof(err)) == -1, "empty instance_dir");
	is_str(err, "key 'instance_dir': expected a path of 1 to 4096 bytes",
	    "empty instance_dir message");
	config_free(&cfg);

	config_defaults(&cfg);
	config_set(&cfg, "llm.default_profile=missing", err, sizeof(err));
	ok(config_finish(&cfg, err, sizeof(err)) == -1,
	    "unknown default_profile");
	is_str(err, "key 'llm.default_profile': no profile 'missing' in "
	    "llm.profiles", "unknown default_profile message");
	config_free(&cfg);

	ok(load_text(&cfg, "llm:\n  profiles:\n    fast: {}\n") == 0,
	    "profiles without default: %s", err);
	ok(config_finish(&cfg, err, sizeof(err)) == -1,
	    "file's profiles drop 'default', default_profile unchanged");
	ok(strstr(err, ": key 'llm.default_profile': no profile 'default' in "
	    "llm.profiles") != NULL && strncmp(err, tmp_path,
	    strlen(tmp_path)) == 0, "finish error names the file: %s", err);
	config_free(&cfg);

	/* Values set behind config_set's back are checked too. */
	config_defaults(&cfg);
	free(cfg.sandbox.seccomp);
	cfg.sandbox.seccomp = strdup("audit");
	ok(config_finish(&cfg, err, sizeof(err)) == -1, "finish checks enums");
	is_str(err, "key 'sandbox.seccomp': expected one of default|enforce|off",
	    "finish enum message");
	config_free(&cfg);

	config_defaults(&cfg);
	free(cfg.listen);
	cfg.listen = strdup("http://x");
	ok(config_finish(&cfg, err, sizeof(err)) == -1, "finish checks listen");
	config_free(&cfg);
}

static void
test_example(void)
{
	struct config	 cfg;
	const char	*srcdir = getenv("CDM_SRCDIR");
	char		 path[4096];

	if (srcdir == NULL || *srcdir == '\0') {
		ok(1, "# skip CDM_SRCDIR is not set");
		return;
	}
	snprintf(path, sizeof(path), "%s/conf-examples/codumentor.yaml", srcdir);
	config_defaults(&cfg);
	ok(config_load_file(&cfg, path, err, sizeof(err)) == 0,
	    "conf-examples/codumentor.yaml loads: %s", err);
	ok(config_finish(&cfg, err, sizeof(err)) == 0,
	    "conf-examples/codumentor.yaml finishes: %s", err);
	is_int(cfg.server.workers, 16, "example keeps the defaults");
	is_int(cfg.llm.n_profiles, 1, "example has one profile");
	config_free(&cfg);
}

int
main(void)
{
	/* A fixed HOME makes "~/" expansion predictable. */
	setenv("HOME", "/home/tester", 1);
	unsetenv("CODUMENTOR_JWT_SECRET");

	test_defaults();
	test_full_file();
	test_file_errors();
	test_empty_files();
	test_set();
	test_finish();
	test_example();
	return done_testing();
}
