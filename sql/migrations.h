/* migrations.h — the schema migrations compiled in from sql/NNN_*.sql. */
#ifndef CDM_MIGRATIONS_H
#define CDM_MIGRATIONS_H
#include <stddef.h>
struct migration {
	const char	*name;
	const char	*sql;
};
extern const struct migration migrations[];
extern const size_t n_migrations;
#endif
