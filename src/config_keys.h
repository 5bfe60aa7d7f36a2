/*
 * config_keys.h — private to config*.c: the table of configuration keys and
 * what each key's type accepts. Offers the two key tables (the top level and
 * one llm.profiles entry), typed parsing of one scalar into its field,
 * defaults, the checks a string type adds, and the small helpers the file
 * reader, --set and config_finish share. Nothing outside src/config*.c uses it.
 */
#ifndef CDM_CONFIG_KEYS_H
#define CDM_CONFIG_KEYS_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

#define CONFIG_STR_MAX		4096		/* any string value */
#define CONFIG_LIST_MAX		16		/* previous_jwt_secrets */
#define CONFIG_PROFILES_MAX	64
#define PROFILE_NAME_MAX	64
#define KEY_NAME_MAX		160		/* a dotted key, as printed */
#define PROFILES_PREFIX		"llm.profiles."

/*
 * A key's type says which values it accepts; string-valued types differ
 * only in their checks, so a typo in a mode or an address is reported with
 * the file and line instead of failing later at bind() or chmod().
 */
enum ktype {
	K_STR,		/* any string */
	K_SECRET,	/* a string never echoed in error messages */
	K_PATH,		/* a string; config_finish expands a leading "~/" */
	K_URL,		/* http:// or https:// */
	K_ENUM,		/* one of the '|'-separated choices */
	K_MODE,		/* octal permissions 000..0777, stored as "0NNN" */
	K_LISTEN,	/* unix:/PATH or HOST:PORT */
	K_INT,		/* int within min..max */
	K_LONG,		/* long within min..max */
	K_BOOL,		/* true | false, nothing else */
	K_DOUBLE,	/* finite number within min..max */
	K_SECRET_LIST,	/* auth.previous_jwt_secrets only */
	K_PROFILES,	/* llm.profiles only */
};

struct key {
	const char	*name;		/* dotted, relative to its table */
	enum ktype	 type;
	size_t		 off;		/* into struct config or llm_profile */
	long long	 min, max;	/* K_INT, K_LONG, K_DOUBLE */
	const char	*def;		/* default, parsed like a --set value */
	const char	*choices;	/* K_ENUM: "a|b|c" */
};

struct table {
	const struct key	*keys;
	size_t			 n;
};

/* Every key of the file, and the fields of one llm.profiles.NAME entry. */
extern const struct table cfg_top_table;
extern const struct table cfg_profile_table;

/* One scalar value, from the file or from the command line. */
struct scalar {
	const char	*text;
	size_t		 len;
	bool		 null;		/* YAML null: empty, ~, null */
	bool		 quoted;	/* a quoted YAML scalar is never a number */
};

/* Tables and values. */
const struct key *cfg_table_find(const struct table *, const char *);
bool	cfg_table_has_section(const struct table *, const char *);
void	cfg_table_defaults(const struct table *, void *);
bool	cfg_type_is_string(enum ktype);
bool	cfg_string_valid(const struct key *, const char *);
int	cfg_scalar_store(void *, const struct key *, const struct scalar *);
void	cfg_key_expected(const struct key *, char *, size_t);

/* auth.previous_jwt_secrets. */
void	cfg_list_free(char **, size_t);
void	cfg_list_replace(struct config *, char **, size_t);
bool	cfg_list_item_valid(const char *, size_t);
int	cfg_list_store_csv(struct config *, const char *);

/* llm.profiles entries. */
bool	cfg_profile_name_valid(const char *, size_t);
void	cfg_profile_init(struct llm_profile *, const char *, size_t);
void	cfg_profile_free(struct llm_profile *);
void	cfg_profiles_free(struct llm_profile *, size_t);

/* Text for messages. */
void	cfg_text_show(char *, size_t, const char *, size_t);
bool	cfg_name_join(char *, size_t, const char *, const char *);
char	*cfg_dup_len(const char *, size_t);

#endif
