/*
 * config_yaml.c — config_load_file(): one YAML file read whole (bounded) and
 * walked with libyaml's document API against the key tables, so an unknown
 * key, a duplicate or a value of the wrong type is an error naming the file,
 * the line and the dotted key.
 *
 * It does not know what a key means or how a type is parsed (config_keys.c),
 * and it applies no environment, "~/" expansion or final checks
 * (config_finish in config.c).
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <yaml.h>

#include "config.h"
#include "config_keys.h"
#include "util.h"

#define CONFIG_FILE_MAX		(1024 * 1024)	/* bytes of YAML we read */

/* State of one config_load_file() walk. */
struct loader {
	const char	*path;
	yaml_document_t	*doc;
	char		*err;
	size_t		 errlen;
};

static int
load_error(struct loader *ld, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
load_error(struct loader *ld, const yaml_node_t *n, const char *fmt, ...)
{
	va_list	ap;
	int	len;

	len = snprintf(ld->err, ld->errlen, "%s:%zu: ", ld->path,
	    n->start_mark.line + 1);
	if (len < 0 || (size_t)len >= ld->errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(ld->err + len, ld->errlen - (size_t)len, fmt, ap);
	va_end(ap);
	return -1;
}

static int
load_type_error(struct loader *ld, const yaml_node_t *n, const struct key *k,
    const char *name)
{
	char why[160];

	cfg_key_expected(k, why, sizeof(why));
	return load_error(ld, n, "key '%s': %s", name, why);
}

static bool
node_is_null(const yaml_node_t *n)
{
	const char	*s;
	size_t		 len;

	if (n->type != YAML_SCALAR_NODE ||
	    n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	s = (const char *)n->data.scalar.value;
	len = n->data.scalar.length;
	return len == 0 || (len == 1 && s[0] == '~') ||
	    (len == 4 && (memcmp(s, "null", 4) == 0 ||
	    memcmp(s, "Null", 4) == 0 || memcmp(s, "NULL", 4) == 0));
}

static void
node_scalar(const yaml_node_t *n, struct scalar *v)
{
	v->text = (const char *)n->data.scalar.value;
	v->len = n->data.scalar.length;
	v->null = node_is_null(n);
	v->quoted = n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
}

static bool
node_same_key(const yaml_node_t *a, const yaml_node_t *b)
{
	return a->type == YAML_SCALAR_NODE && b->type == YAML_SCALAR_NODE &&
	    a->data.scalar.length == b->data.scalar.length &&
	    memcmp(a->data.scalar.value, b->data.scalar.value,
	    a->data.scalar.length) == 0;
}

/*
 * The key node of one mapping pair as a printable dotted name below prefix.
 * -1 (with the error written) when it is not a plain key name; a name with
 * a dot, or one too long to be ours, comes back with *known = false.
 */
static int
load_key_name(struct loader *ld, const yaml_node_t *kn, const char *prefix,
    char *name, size_t namelen, bool *known)
{
	char	shown[KEY_NAME_MAX];
	size_t	len;

	if (kn->type != YAML_SCALAR_NODE)
		return load_error(ld, kn, "expected a key name%s%s%s",
		    *prefix ? " under '" : "", prefix, *prefix ? "'" : "");
	len = kn->data.scalar.length;
	cfg_text_show(shown, sizeof(shown), (const char *)kn->data.scalar.value, len);
	*known = len < sizeof(shown) && strlen(shown) == len &&
	    memchr(shown, '.', len) == NULL;
	if (!cfg_name_join(name, namelen, prefix, shown))
		*known = false;		/* cut short, only good for a message */
	return 0;
}

/* A block of keys where a mapping or a null ("server:") may stand. */
static int
load_section_check(struct loader *ld, const yaml_node_t *vn, const char *name)
{
	if (vn->type == YAML_MAPPING_NODE || node_is_null(vn))
		return 0;
	return load_error(ld, vn, "key '%s': expected a mapping", name);
}

static int
load_list(struct loader *ld, struct config *cfg, const struct key *k,
    const yaml_node_t *vn, const char *name)
{
	char		**v;
	yaml_node_item_t *it;
	yaml_node_t	 *in;
	size_t		  n = 0;

	if (node_is_null(vn)) {
		cfg_list_replace(cfg, NULL, 0);
		return 0;
	}
	if (vn->type != YAML_SEQUENCE_NODE)
		return load_type_error(ld, vn, k, name);
	v = xcalloc(CONFIG_LIST_MAX, sizeof(*v));
	for (it = vn->data.sequence.items.start;
	    it < vn->data.sequence.items.top; it++) {
		in = yaml_document_get_node(ld->doc, *it);
		if (n == CONFIG_LIST_MAX || in == NULL ||
		    in->type != YAML_SCALAR_NODE ||
		    !cfg_list_item_valid((const char *)in->data.scalar.value,
		    in->data.scalar.length)) {
			cfg_list_free(v, n);
			return load_type_error(ld, in ? in : vn, k, name);
		}
		v[n++] = cfg_dup_len((const char *)in->data.scalar.value,
		    in->data.scalar.length);
	}
	cfg_list_replace(cfg, v, n);
	return 0;
}

static int load_map(struct loader *, const struct table *, void *,
    const yaml_node_t *, const char *);

/*
 * llm.profiles: NAME -> {field: value}. The file's set replaces the current
 * one as a whole, so a file naming only "fast" does not keep "default"; it is
 * built aside and swapped in so a failure leaves cfg as it was.
 */
static int
load_profiles(struct loader *ld, struct config *cfg, const struct key *k,
    const yaml_node_t *vn, const char *name)
{
	struct llm_profile	*v;
	yaml_node_pair_t	*pair, *prev;
	yaml_node_t		*kn, *pn;
	char			 pname[KEY_NAME_MAX];
	size_t			 n = 0, npairs;
	bool			 known;

	if (node_is_null(vn)) {
		cfg_profiles_free(cfg->llm.profiles, cfg->llm.n_profiles);
		cfg->llm.profiles = NULL;
		cfg->llm.n_profiles = 0;
		return 0;
	}
	if (vn->type != YAML_MAPPING_NODE)
		return load_type_error(ld, vn, k, name);
	npairs = (size_t)(vn->data.mapping.pairs.top -
	    vn->data.mapping.pairs.start);
	if (npairs > CONFIG_PROFILES_MAX)
		return load_error(ld, vn, "key '%s': at most %d profiles",
		    name, CONFIG_PROFILES_MAX);
	v = xcalloc(npairs ? npairs : 1, sizeof(*v));
	for (pair = vn->data.mapping.pairs.start;
	    pair < vn->data.mapping.pairs.top; pair++) {
		kn = yaml_document_get_node(ld->doc, pair->key);
		pn = yaml_document_get_node(ld->doc, pair->value);
		if (kn == NULL || pn == NULL)
			goto bad;	/* libyaml never does this */
		if (load_key_name(ld, kn, name, pname, sizeof(pname),
		    &known) == -1)
			goto err;
		if (!cfg_profile_name_valid((const char *)kn->data.scalar.value,
		    kn->data.scalar.length)) {
			load_error(ld, kn, "key '%s': a profile name is 1 to %d "
			    "of A-Z a-z 0-9 . _ -", pname, PROFILE_NAME_MAX);
			goto err;
		}
		for (prev = vn->data.mapping.pairs.start; prev < pair; prev++)
			if (node_same_key(yaml_document_get_node(ld->doc,
			    prev->key), kn)) {
				load_error(ld, kn, "duplicate key '%s'", pname);
				goto err;
			}
		cfg_profile_init(&v[n++], (const char *)kn->data.scalar.value,
		    kn->data.scalar.length);
		if (load_section_check(ld, pn, pname) == -1)
			goto err;
		if (pn->type == YAML_MAPPING_NODE &&
		    load_map(ld, &cfg_profile_table, &v[n - 1], pn,
		    pname) == -1)
			goto err;
	}
	cfg_profiles_free(cfg->llm.profiles, cfg->llm.n_profiles);
	cfg->llm.profiles = v;
	cfg->llm.n_profiles = n;
	return 0;
bad:
	load_type_error(ld, vn, k, name);
err:
	cfg_profiles_free(v, n);
	return -1;
}

static int
load_value(struct loader *ld, void *base, const struct key *k,
    const yaml_node_t *vn, const char *name)
{
	struct scalar v;

	switch (k->type) {
	case K_SECRET_LIST:
		return load_list(ld, base, k, vn, name);
	case K_PROFILES:
		return load_profiles(ld, base, k, vn, name);
	default:
		break;
	}
	if (vn->type != YAML_SCALAR_NODE)
		return load_type_error(ld, vn, k, name);
	node_scalar(vn, &v);
	if (cfg_scalar_store(base, k, &v) == -1)
		return load_type_error(ld, vn, k, name);
	return 0;
}

/*
 * One mapping of keys of table t, below the dotted prefix (relative to t).
 * display is what error messages put before the prefix ("llm.profiles.x"
 * for a profile's fields). Unknown and duplicate keys are errors; recursion
 * only follows sections of t, so its depth is bounded by the table.
 */
static int
load_map_at(struct loader *ld, const struct table *t, void *base,
    const yaml_node_t *map, const char *prefix, const char *display)
{
	const struct key	*k;
	yaml_node_pair_t	*pair, *prev;
	yaml_node_t		*kn, *vn, *pk;
	char			 rel[KEY_NAME_MAX], name[KEY_NAME_MAX * 2];
	bool			 known;

	for (pair = map->data.mapping.pairs.start;
	    pair < map->data.mapping.pairs.top; pair++) {
		kn = yaml_document_get_node(ld->doc, pair->key);
		vn = yaml_document_get_node(ld->doc, pair->value);
		if (kn == NULL || vn == NULL)
			return load_error(ld, map, "malformed mapping");
		if (load_key_name(ld, kn, prefix, rel, sizeof(rel),
		    &known) == -1)
			return -1;
		cfg_name_join(name, sizeof(name), display, rel);
		k = known ? cfg_table_find(t, rel) : NULL;
		if (k == NULL && !(known && cfg_table_has_section(t, rel)))
			return load_error(ld, kn, "unknown key '%s'", name);
		for (prev = map->data.mapping.pairs.start; prev < pair; prev++) {
			pk = yaml_document_get_node(ld->doc, prev->key);
			if (pk != NULL && node_same_key(pk, kn))
				return load_error(ld, kn, "duplicate key '%s'",
				    name);
		}
		if (k != NULL) {
			if (load_value(ld, base, k, vn, name) == -1)
				return -1;
			continue;
		}
		if (load_section_check(ld, vn, name) == -1)
			return -1;
		if (vn->type == YAML_MAPPING_NODE &&
		    load_map_at(ld, t, base, vn, rel, display) == -1)
			return -1;
	}
	return 0;
}

static int
load_map(struct loader *ld, const struct table *t, void *base,
    const yaml_node_t *map, const char *display)
{
	return load_map_at(ld, t, base, map, "", display);
}

/* The whole file into memory, at most CONFIG_FILE_MAX bytes. */
static int
file_read(const char *path, char **bufp, size_t *lenp, char *err,
    size_t errlen)
{
	struct stat	 st;
	char		*buf = NULL;
	size_t		 len = 0;
	ssize_t		 r;
	int		 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		goto fail;
	}
	/* One byte more than allowed, to tell "exactly max" from "more". */
	buf = xmalloc(CONFIG_FILE_MAX + 1);
	while (len <= CONFIG_FILE_MAX) {
		r = read(fd, buf + len, CONFIG_FILE_MAX + 1 - len);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			goto fail;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	if (len > CONFIG_FILE_MAX) {
		snprintf(err, errlen, "%s: larger than %d bytes", path,
		    CONFIG_FILE_MAX);
		goto fail;
	}
	close(fd);
	*bufp = buf;
	*lenp = len;
	return 0;
fail:
	free(buf);
	close(fd);
	return -1;
}

static void
yaml_syntax_error(const yaml_parser_t *p, const char *path, const char *buf,
    size_t len, char *err, size_t errlen)
{
	size_t i, line;

	if (p->error == YAML_MEMORY_ERROR) {
		snprintf(err, errlen, "%s: out of memory while parsing", path);
		return;
	}
	if (p->error == YAML_READER_ERROR) {
		/* Encoding errors carry a byte offset, not a mark. */
		for (i = 0, line = 1; i < p->problem_offset && i < len; i++)
			if (buf[i] == '\n')
				line++;
	} else
		line = p->problem_mark.line + 1;
	if (p->context != NULL)
		snprintf(err, errlen, "%s:%zu: YAML syntax error: %s "
		    "(%s on line %zu)", path, line,
		    p->problem ? p->problem : "unknown problem", p->context,
		    p->context_mark.line + 1);
	else
		snprintf(err, errlen, "%s:%zu: YAML syntax error: %s", path,
		    line, p->problem ? p->problem : "unknown problem");
}

int
config_load_file(struct config *cfg, const char *path, char *err,
    size_t errlen)
{
	yaml_parser_t	 parser;
	yaml_document_t	 doc, extra;
	yaml_node_t	*root, *next;
	struct loader	 ld;
	char		*buf = NULL;
	size_t		 len;
	size_t		 line;
	int		 rc = -1, have_doc = 0;

	if (file_read(path, &buf, &len, err, errlen) == -1)
		return -1;
	if (!yaml_parser_initialize(&parser)) {
		snprintf(err, errlen, "%s: out of memory", path);
		free(buf);
		return -1;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&parser, &doc)) {
		yaml_syntax_error(&parser, path, buf, len, err, errlen);
		goto out;
	}
	have_doc = 1;
	root = yaml_document_get_root_node(&doc);

	/* A second document would be ignored silently; refuse it instead. */
	if (root != NULL) {
		if (!yaml_parser_load(&parser, &extra)) {
			yaml_syntax_error(&parser, path, buf, len, err, errlen);
			goto out;
		}
		next = yaml_document_get_root_node(&extra);
		line = next ? next->start_mark.line + 1 : 0;
		yaml_document_delete(&extra);
		if (next != NULL) {
			snprintf(err, errlen, "%s:%zu: a second YAML document; "
			    "the configuration is one document", path, line);
			goto out;
		}
	}

	free(cfg->path);
	cfg->path = xstrdup(path);
	if (root == NULL || node_is_null(root)) {
		rc = 0;		/* empty file: the defaults stand */
		goto out;
	}
	ld.path = path;
	ld.doc = &doc;
	ld.err = err;
	ld.errlen = errlen;
	if (root->type != YAML_MAPPING_NODE) {
		load_error(&ld, root, "expected a mapping of keys at the top");
		goto out;
	}
	rc = load_map(&ld, &cfg_top_table, cfg, root, "");
out:
	if (have_doc)
		yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	free(buf);
	return rc;
}
