/*
 * sandbox-driver.c — drives the server's sandbox client (src/sandbox_client.c)
 * the way the engine does, for the t/3* tests: load a configuration, start
 * the helper, call sandbox_run() (optionally from several threads at once,
 * optionally cancelling), print each result as one JSON line, stop.
 *
 *   sandbox-driver CONFIG [--timeout MS] [--cap BYTES] [--conversation ID]
 *       [--parallel N] [--cancel-after MS] [--env NAME=VALUE]
 *       [--repeat N [--fresh] [--prepare MS]] -- CMD [ARG...]
 *
 * --repeat runs the command N times one after the other in one workspace and
 * prints {"ms", "rc", "exit_code", "output"} for each (bench/sandbox.py; the
 * overlay held between commands, t/34); with --fresh each run gets a new
 * workspace, as the first command of a conversation; --prepare MS first
 * asks for the workspace's overlay as a turn's start does and waits MS
 * before the timed run.
 * Not a test itself: the Python tests judge what it prints.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "app.h"
#include "sandbox.h"
#include "util.h"

#define PAR_MAX	16

struct job {
	const char		*conv;
	const char *const	*argv;
	struct sandbox_env	 env[1];
	size_t			 nenv;
	int			 timeout_ms;
	size_t			 cap;
	int			 cancel_after;
	volatile int		 cancel;
	struct sandbox_result	 res;
	int			 rc;
	char			 id[ID_BUFSZ];
};

static void *
canceller(void *arg)
{
	struct job *j = arg;

	usleep((useconds_t)j->cancel_after * 1000);
	j->cancel = 1;
	return NULL;
}

static void *
job_run(void *arg)
{
	struct job		*j = arg;
	struct sandbox_run	 r;
	pthread_t		 t;

	memset(&r, 0, sizeof(r));
	r.conversation_id = j->conv;
	r.argv = j->argv;
	r.env = j->nenv ? j->env : NULL;
	r.nenv = j->nenv;
	r.timeout_ms = j->timeout_ms;
	r.output_cap = j->cap;
	r.cancel = &j->cancel;
	if (j->cancel_after > 0)
		pthread_create(&t, NULL, canceller, j);
	j->rc = sandbox_run(&r, &j->res);
	if (j->cancel_after > 0)
		pthread_join(t, NULL);
	return NULL;
}

static void
print_result(const struct job *j)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "conversation", json_object_new_string(j->conv));
	json_object_object_add(o, "rc", json_object_new_int(j->rc));
	json_object_object_add(o, "started", json_object_new_int(j->res.started));
	json_object_object_add(o, "exit_code", json_object_new_int(j->res.exit_code));
	json_object_object_add(o, "signal", json_object_new_int(j->res.signal));
	json_object_object_add(o, "timed_out", json_object_new_int(j->res.timed_out));
	json_object_object_add(o, "cancelled", json_object_new_int(j->res.cancelled));
	json_object_object_add(o, "truncated", json_object_new_int(j->res.truncated));
	json_object_object_add(o, "output", json_object_new_string_len(
	    j->res.output ? j->res.output : "", (int)j->res.output_len));
	json_object_object_add(o, "error", json_object_new_string(j->res.error));
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
}

int
main(int argc, char **argv)
{
	struct job	 jobs[PAR_MAX];
	pthread_t	 t[PAR_MAX];
	const char	*conv = NULL;
	char		 err[512], *eq, reason[512];
	int		 i, n = 1, timeout = 0, cancel_after = 0, repeat = 0;
	int		 fresh = 0, prepare_ms = -1;
	size_t		 cap = 0, nenv = 0;
	struct sandbox_env env = { NULL, NULL };

	if (argc < 3) {
		fprintf(stderr, "usage: sandbox-driver CONFIG [options] -- CMD...\n");
		return 2;
	}
	config_defaults(&app.cfg);
	if (config_load_file(&app.cfg, argv[1], err, sizeof(err)) == -1 ||
	    config_finish(&app.cfg, err, sizeof(err)) == -1) {
		fprintf(stderr, "sandbox-driver: %s\n", err);
		return 2;
	}
	for (i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		} else if (i + 1 >= argc)
			return 2;
		else if (strcmp(argv[i], "--timeout") == 0)
			timeout = atoi(argv[++i]);
		else if (strcmp(argv[i], "--cap") == 0)
			cap = (size_t)atol(argv[++i]);
		else if (strcmp(argv[i], "--conversation") == 0)
			conv = argv[++i];
		else if (strcmp(argv[i], "--parallel") == 0)
			n = atoi(argv[++i]);
		else if (strcmp(argv[i], "--fresh") == 0)
			fresh = 1;
		else if (strcmp(argv[i], "--prepare") == 0)
			prepare_ms = atoi(argv[++i]);
		else if (strcmp(argv[i], "--repeat") == 0)
			repeat = atoi(argv[++i]);
		else if (strcmp(argv[i], "--cancel-after") == 0)
			cancel_after = atoi(argv[++i]);
		else if (strcmp(argv[i], "--env") == 0 &&
		    (eq = strchr(argv[i + 1], '=')) != NULL) {
			*eq = '\0';
			env.name = argv[++i];
			env.value = eq + 1;
			nenv = 1;
		} else
			return 2;
	}
	if (i >= argc || n < 1 || n > PAR_MAX || repeat < 0)
		return 2;
	if (sandbox_start() == -1) {
		struct json_object *o = json_object_new_object();

		sandbox_available(reason, sizeof(reason));
		json_object_object_add(o, "start", json_object_new_string("failed"));
		json_object_object_add(o, "reason", json_object_new_string(reason));
		printf("%s\n", json_object_to_json_string(o));
		json_object_put(o);
	}
	memset(jobs, 0, sizeof(jobs));
	if (repeat > 0) {
		memset(&jobs[0], 0, sizeof(jobs[0]));
		random_id(jobs[0].id);
		jobs[0].conv = conv != NULL ? conv : jobs[0].id;
		jobs[0].argv = (const char *const *)(argv + i);
		for (int k = 0; k < repeat; k++) {
			int64_t			 t0 = mono_us();
			struct json_object	*o;

			if (fresh && k > 0)
				random_id(jobs[0].id);
			if (prepare_ms >= 0) {
				/* As a turn's start does, then the model thinks. */
				sandbox_prepare(jobs[0].conv);
				usleep((useconds_t)prepare_ms * 1000);
				t0 = mono_us();
			}
			job_run(&jobs[0]);
			o = json_object_new_object();
			json_object_object_add(o, "ms", json_object_new_double(
			    (double)(mono_us() - t0) / 1000.0));
			json_object_object_add(o, "rc", json_object_new_int(
			    jobs[0].rc));
			json_object_object_add(o, "exit_code", json_object_new_int(
			    jobs[0].res.exit_code));
			json_object_object_add(o, "output", json_object_new_string(
			    jobs[0].res.output ? jobs[0].res.output : ""));
			printf("%s\n", json_object_to_json_string(o));
			json_object_put(o);
			sandbox_result_free(&jobs[0].res);
		}
		n = 0;
	}
	for (int k = 0; k < n; k++) {
		if (conv != NULL)
			jobs[k].conv = conv;
		else {
			random_id(jobs[k].id);
			jobs[k].conv = jobs[k].id;
		}
		jobs[k].argv = (const char *const *)(argv + i);
		jobs[k].env[0] = env;
		jobs[k].nenv = nenv;
		jobs[k].timeout_ms = timeout;
		jobs[k].cap = cap;
		jobs[k].cancel_after = cancel_after;
		pthread_create(&t[k], NULL, job_run, &jobs[k]);
	}
	for (int k = 0; k < n; k++) {
		pthread_join(t[k], NULL);
		print_result(&jobs[k]);
		sandbox_result_free(&jobs[k].res);
	}
	fflush(stdout);
	sandbox_stop();
	config_free(&app.cfg);
	return 0;
}
