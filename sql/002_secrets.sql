-- 002_secrets.sql — values sealed at rest (user secrets, the API keys of
-- user model profiles, later OAuth tokens) and the users' model profiles.
-- src/crypto.c seals; src/secrets.c reads and writes. Depends on 001 only.

-- One row per sealed value. kind says what it is ('secret', 'profile');
-- (user_id, kind, name) is bound into the ciphertext as associated data,
-- so a value copied to another row does not decrypt. scheme 'plain' marks
-- a value stored while no auth.jwt_secret was set: the first read after a
-- secret is configured seals it.
CREATE TABLE sealed_values (
	user_id		TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	kind		TEXT NOT NULL,
	name		TEXT NOT NULL,
	scheme		TEXT NOT NULL CHECK (scheme IN ('plain', 'xchacha20poly1305')),
	key_id		TEXT,			-- hex id of the sealing key; NULL when plain
	value		BLOB NOT NULL,		-- nonce || ciphertext || tag, or the plaintext
	env		INTEGER NOT NULL DEFAULT 0,	-- secrets: passed to sandboxed commands
	updated_at	TEXT NOT NULL,
	PRIMARY KEY (user_id, kind, name),
	CHECK ((scheme = 'plain') = (key_id IS NULL))
) WITHOUT ROWID;

-- A user's own model profiles; the API key, when there is one, is the
-- sealed_values row (user_id, 'profile', name).
CREATE TABLE user_profiles (
	user_id		TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	name		TEXT NOT NULL,
	base_url	TEXT NOT NULL,
	model		TEXT NOT NULL,
	context_window	INTEGER NOT NULL,
	max_output_tokens INTEGER NOT NULL,
	temperature	REAL NOT NULL,
	created_at	TEXT NOT NULL,
	updated_at	TEXT NOT NULL,
	PRIMARY KEY (user_id, name)
) WITHOUT ROWID;
