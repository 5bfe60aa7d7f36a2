/*
 * tool_files.c — the file tools read_file, write_file, edit_file, list_dir
 * and search_files: their arguments, limits and the text they return to the
 * model.
 *
 * They never touch the filesystem themselves: every path goes through ws_fs.h,
 * which confines it to the conversation's workspace and merges its overlay
 * layers.
 */
#include <sys/stat.h>

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>

#include "tools.h"
#include "util.h"
#include "ws_fs.h"

#define FILE_MAX	(4 * 1024 * 1024)	/* bytes read or written */
#define SEARCH_FILES	5000			/* files visited */
#define SEARCH_FILE_MAX	(1024 * 1024)		/* larger files are skipped */
#define SEARCH_RESULTS	200
#define SEARCH_DEPTH	24
#define SEARCH_LINE	300			/* bytes of a matching line shown */
#define PATTERN_MAX	1000

static const char *
arg_str(struct json_object *args, const char *key)
{
	struct json_object *v;

	if (json_object_object_get_ex(args, key, &v) &&
	    json_object_is_type(v, json_type_string))
		return json_object_get_string(v);
	return NULL;
}

static int
arg_int(struct json_object *args, const char *key, int def)
{
	struct json_object *v;

	if (json_object_object_get_ex(args, key, &v) &&
	    json_object_is_type(v, json_type_int))
		return (int)json_object_get_int64(v);
	return def;
}

void
tool_read_file(const struct tool_ctx *ctx, struct json_object *args,
    struct tool_result *res)
{
	struct ws_fs	 w;
	char		 path[WS_FS_PATH_MAX + 1], *buf, *p, *from, *to;
	size_t		 len;
	int		 start = arg_int(args, "start_line", 1);
	int		 end = arg_int(args, "end_line", 0), line;

	if (ws_fs_path_check(arg_str(args, "path"), path, sizeof(path),
	    res) == -1 ||
	    ws_fs_open(ctx, &w, res) == -1)
		return;
	if (ws_fs_read(&w, path, FILE_MAX, &buf, &len, res) == -1) {
		ws_fs_close(&w);
		return;
	}
	ws_fs_close(&w);
	if (memchr(buf, '\0', len) != NULL) {
		free(buf);
		tool_fail(res, "'%s' is a binary file", path);
		return;
	}
	if (end != 0 && end < start) {
		free(buf);
		tool_fail(res, "end_line (%d) is before start_line (%d)", end,
		    start);
		return;
	}
	/* Cut to lines start..end (1-based, inclusive). */
	from = buf;
	for (line = 1, p = buf; line < start && p != NULL; line++)
		if ((p = memchr(p, '\n', len - (size_t)(p - buf))) != NULL)
			p++;
	if (p == NULL || (start > 1 && p == buf + len)) {
		free(buf);
		tool_fail(res, "'%s' has fewer than %d lines", path, start);
		return;
	}
	from = p;
	to = buf + len;
	if (end != 0) {
		for (; line <= end && p != NULL; line++)
			if ((p = memchr(p, '\n', len - (size_t)(p - buf))) != NULL)
				p++;
		if (p != NULL)
			to = p;
	}
	memmove(buf, from, (size_t)(to - from));
	buf[to - from] = '\0';
	res->ok = 1;
	tool_output(res, buf, (size_t)(to - from));
}

void
tool_write_file(const struct tool_ctx *ctx, struct json_object *args,
    struct tool_result *res)
{
	struct ws_fs	 w;
	char		 path[WS_FS_PATH_MAX + 1];
	const char	*content = arg_str(args, "content");
	size_t		 len = content ? strlen(content) : 0;

	if (ws_fs_path_check(arg_str(args, "path"), path, sizeof(path),
	    res) == -1)
		return;
	if (len > FILE_MAX) {
		tool_fail(res, "the content is larger than %d bytes", FILE_MAX);
		return;
	}
	if (ws_fs_open(ctx, &w, res) == -1)
		return;
	if (ws_fs_write(&w, path, content ? content : "", len, res) == 0) {
		char *o = xasprintf("wrote %zu bytes to %s", len, path);

		res->ok = 1;
		tool_output(res, o, strlen(o));
	}
	ws_fs_close(&w);
}

static size_t
count_occurrences(const char *hay, const char *needle, const char **first)
{
	const char	*p = hay;
	size_t		 n = 0, nl = strlen(needle);

	*first = NULL;
	while ((p = strstr(p, needle)) != NULL) {
		if (n++ == 0)
			*first = p;
		p += nl;
	}
	return n;
}

void
tool_edit_file(const struct tool_ctx *ctx, struct json_object *args,
    struct tool_result *res)
{
	struct ws_fs	 w;
	char		 path[WS_FS_PATH_MAX + 1], *buf, *out;
	const char	*old = arg_str(args, "old_text");
	const char	*new = arg_str(args, "new_text"), *at;
	size_t		 len, n, ol, nl;

	if (ws_fs_path_check(arg_str(args, "path"), path, sizeof(path),
	    res) == -1)
		return;
	if (old == NULL || *old == '\0') {
		tool_fail(res, "old_text must not be empty");
		return;
	}
	if (ws_fs_open(ctx, &w, res) == -1)
		return;
	if (ws_fs_read(&w, path, FILE_MAX, &buf, &len, res) == -1)
		goto out;
	if (memchr(buf, '\0', len) != NULL) {
		tool_fail(res, "'%s' is a binary file", path);
		free(buf);
		goto out;
	}
	if ((n = count_occurrences(buf, old, &at)) != 1) {
		if (n == 0)
			tool_fail(res, "old_text does not occur in '%s'; "
			    "nothing was changed", path);
		else
			tool_fail(res, "old_text occurs %zu times in '%s'; "
			    "include more context so it matches once; nothing "
			    "was changed", n, path);
		free(buf);
		goto out;
	}
	ol = strlen(old);
	nl = strlen(new);
	if (len - ol + nl > FILE_MAX) {
		tool_fail(res, "the edited file would be larger than %d bytes",
		    FILE_MAX);
		free(buf);
		goto out;
	}
	out = xmalloc(len - ol + nl + 1);
	memcpy(out, buf, (size_t)(at - buf));
	memcpy(out + (at - buf), new, nl);
	memcpy(out + (at - buf) + nl, at + ol, len - (size_t)(at - buf) - ol);
	if (ws_fs_write(&w, path, out, len - ol + nl, res) == 0) {
		char *o = xasprintf("edited %s: replaced %zu bytes with %zu",
		    path, ol, nl);

		res->ok = 1;
		tool_output(res, o, strlen(o));
	}
	free(out);
	free(buf);
out:
	ws_fs_close(&w);
}

void
tool_list_dir(const struct tool_ctx *ctx, struct json_object *args,
    struct tool_result *res)
{
	struct ws_listing	 l;
	struct ws_fs	 w;
	char		 path[WS_FS_PATH_MAX + 1], *out = NULL;
	size_t		 i, len = 0, cap = 0, shown = 0;
	int		 n;

	if (ws_fs_path_check(arg_str(args, "path"), path, sizeof(path),
	    res) == -1 ||
	    ws_fs_open(ctx, &w, res) == -1)
		return;
	if (ws_fs_list(&w, path, &l, res) == -1) {
		ws_fs_close(&w);
		return;
	}
	ws_fs_close(&w);
	for (i = 0; i < l.n; i++) {
		const struct ws_entry *e = &l.v[i];

		if (e->hidden)
			continue;
		if (cap - len < strlen(e->name) + 64) {
			cap = cap * 2 + strlen(e->name) + 256;
			out = xrealloc(out, cap);
		}
		if (e->type == 'd')
			n = snprintf(out + len, cap - len, "%s/\n", e->name);
		else if (e->type == 'f')
			n = snprintf(out + len, cap - len, "%s (%lld bytes)\n",
			    e->name, (long long)e->size);
		else if (e->type == 'l')
			n = snprintf(out + len, cap - len, "%s (symlink)\n",
			    e->name);
		else
			n = snprintf(out + len, cap - len, "%s (special file)\n",
			    e->name);
		len += (size_t)n;
		shown++;
	}
	if (shown == 0)
		out = xasprintf("(empty directory)\n");
	else if (l.truncated) {
		out = xrealloc(out, len + 64);
		snprintf(out + len, 64, "[listing cut at %d entries]\n",
		    WS_FS_LIST_MAX);
	}
	ws_fs_listing_free(&l);
	res->ok = 1;
	tool_output(res, out, strlen(out));
}

struct search {
	regex_t		 re;
	char		*out;
	size_t		 len, cap;
	int		 results, max_results;
	int		 files;
	int		 stopped;
};

static void
search_emit(struct search *s, const char *path, int lineno, const char *line,
    size_t linelen)
{
	size_t need = strlen(path) + SEARCH_LINE + 32;

	if (s->cap - s->len < need) {
		s->cap = s->cap * 2 + need;
		s->out = xrealloc(s->out, s->cap);
	}
	s->len += (size_t)snprintf(s->out + s->len, s->cap - s->len,
	    "%s:%d: %.*s%s\n", path, lineno,
	    (int)(linelen > SEARCH_LINE ? SEARCH_LINE : linelen), line,
	    linelen > SEARCH_LINE ? " [...]" : "");
	if (++s->results >= s->max_results)
		s->stopped = 1;
}

static void
search_file(struct search *s, struct ws_fs *w, const char *path)
{
	struct tool_result	 ignore;
	char			*buf, *p, *nl, save;
	size_t			 len;
	int			 lineno = 0;

	memset(&ignore, 0, sizeof(ignore));
	if (++s->files > SEARCH_FILES) {
		s->stopped = 1;
		return;
	}
	if (ws_fs_read(w, path, SEARCH_FILE_MAX, &buf, &len, &ignore) == -1)
		return;		/* too large or vanished: skipped */
	if (memchr(buf, '\0', len) == NULL) {
		for (p = buf; p < buf + len && !s->stopped; p = nl + 1) {
			lineno++;
			if ((nl = memchr(p, '\n', len - (size_t)(p - buf))) == NULL)
				nl = buf + len;
			save = *nl;
			*nl = '\0';
			if (regexec(&s->re, p, 0, NULL, 0) == 0)
				search_emit(s, path, lineno, p, (size_t)(nl - p));
			*nl = save;
		}
	}
	free(buf);
}

static void
search_dir(struct search *s, struct ws_fs *w, const char *path, int depth)
{
	struct tool_result	 ignore;
	struct ws_listing		 l;
	char			*child;
	size_t			 i;

	memset(&ignore, 0, sizeof(ignore));
	if (depth > SEARCH_DEPTH || ws_fs_list(w, path, &l, &ignore) == -1)
		return;
	for (i = 0; i < l.n && !s->stopped; i++) {
		if (l.v[i].hidden || (l.v[i].type != 'f' && l.v[i].type != 'd'))
			continue;	/* symlinks are not followed */
		child = *path ? xasprintf("%s/%s", path, l.v[i].name) :
		    xstrdup(l.v[i].name);
		if (strlen(child) <= WS_FS_PATH_MAX) {
			if (l.v[i].type == 'd')
				search_dir(s, w, child, depth + 1);
			else
				search_file(s, w, child);
		}
		free(child);
	}
	ws_fs_listing_free(&l);
}

void
tool_search_files(const struct tool_ctx *ctx, struct json_object *args,
    struct tool_result *res)
{
	struct search	 s;
	struct stat	 st;
	struct ws_fs	 w;
	enum ws_layer	 layer;
	char		 path[WS_FS_PATH_MAX + 1], msg[128];
	const char	*pattern = arg_str(args, "pattern");
	int		 rc, fd;

	if (ws_fs_path_check(arg_str(args, "path"), path, sizeof(path),
	    res) == -1)
		return;
	if (pattern == NULL || *pattern == '\0' || strlen(pattern) > PATTERN_MAX) {
		tool_fail(res, "pattern must be 1 to %d bytes", PATTERN_MAX);
		return;
	}
	memset(&s, 0, sizeof(s));
	s.max_results = arg_int(args, "max_results", SEARCH_RESULTS);
	if (s.max_results > SEARCH_RESULTS)
		s.max_results = SEARCH_RESULTS;
	if ((rc = regcomp(&s.re, pattern, REG_EXTENDED | REG_NOSUB |
	    REG_NEWLINE)) != 0) {
		regerror(rc, &s.re, msg, sizeof(msg));
		tool_fail(res, "the pattern is not a valid POSIX extended regular "
		    "expression: %s", msg);
		return;
	}
	if (ws_fs_open(ctx, &w, res) == -1) {
		regfree(&s.re);
		return;
	}
	if ((fd = ws_fs_resolve(&w, path, &layer, &st, res)) != -1) {
		close(fd);
		if (S_ISDIR(st.st_mode))
			search_dir(&s, &w, path, 0);
		else if (S_ISREG(st.st_mode))
			search_file(&s, &w, path);
		else
			tool_fail(res, "refused: '%.200s' is not a regular file "
			    "or directory", path);
		if (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)) {
			res->ok = 1;
			if (s.results == 0)
				s.out = xasprintf("no matches\n");
			else if (s.stopped) {
				s.out = xrealloc(s.out, s.len + 80);
				snprintf(s.out + s.len, 80, "[search stopped at "
				    "%d results or %d files]\n", s.max_results,
				    SEARCH_FILES);
			}
			tool_output(res, s.out, strlen(s.out));
			s.out = NULL;
		}
	}
	free(s.out);
	ws_fs_close(&w);
	regfree(&s.re);
}
