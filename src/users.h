/*
 * users.h — user accounts: creation with an argon2id password hash, lookup by
 * id or name, credential checks. Names are 1..64 characters of letters,
 * digits and . _ - @.
 */
#ifndef CDM_USERS_H
#define CDM_USERS_H

#include <stdbool.h>
#include "util.h"

#define USERNAME_MAX	64

struct user {
	char	id[ID_BUFSZ];
	char	username[USERNAME_MAX + 1];
	bool	is_admin;
	char	created_at[TIME_BUFSZ];
};

int	username_is_valid(const char *name);

/* 0 created, 1 name taken, -1 error. */
int	users_create(const char *username, const char *password, bool is_admin,
	    struct user *out);
/* 0 found, 1 not found, -1 error. */
int	users_get(const char *id, struct user *out);
/* 0 password matches, 1 unknown user or wrong password, -1 error. */
int	users_check_password(const char *username, const char *password,
	    struct user *out);

struct json_object *user_to_json(const struct user *u);

#endif
