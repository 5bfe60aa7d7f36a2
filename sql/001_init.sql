-- 001_init.sql — users, conversations, messages, turns and the event log.
-- Ids are random base64url strings (src/util.c random_id), times RFC 3339 UTC.

CREATE TABLE users (
	id		TEXT PRIMARY KEY,
	username	TEXT NOT NULL UNIQUE,
	password_hash	TEXT NOT NULL,
	is_admin	INTEGER NOT NULL DEFAULT 0,
	created_at	TEXT NOT NULL
);

CREATE TABLE conversations (
	id		TEXT PRIMARY KEY,
	user_id		TEXT NOT NULL REFERENCES users(id),
	title		TEXT NOT NULL DEFAULT '',
	model		TEXT,
	created_at	TEXT NOT NULL,
	updated_at	TEXT NOT NULL,
	-- the id of the newest event; the next event gets last_event_id + 1
	last_event_id	INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX conversations_by_user ON conversations(user_id, updated_at DESC);

CREATE TABLE messages (
	id		TEXT PRIMARY KEY,
	conversation_id	TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
	seq		INTEGER NOT NULL,	-- order within the conversation
	role		TEXT NOT NULL,		-- user | assistant | tool | system
	content		TEXT,
	tool_calls	TEXT,			-- JSON array, assistant messages
	tool_call_id	TEXT,			-- tool messages
	turn_id		TEXT,
	created_at	TEXT NOT NULL,
	UNIQUE (conversation_id, seq)
);

CREATE TABLE turns (
	id		TEXT PRIMARY KEY,
	conversation_id	TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
	status		TEXT NOT NULL,		-- queued | running | completed | failed | cancelled
	error		TEXT,
	created_at	TEXT NOT NULL,
	updated_at	TEXT NOT NULL
);
CREATE INDEX turns_by_conversation ON turns(conversation_id, status);

-- The event log is the source of truth for SSE streams: ids increase within
-- a conversation and are never reused.
CREATE TABLE events (
	conversation_id	TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
	id		INTEGER NOT NULL,
	type		TEXT NOT NULL,
	data		TEXT NOT NULL,		-- one line of JSON
	created_at	TEXT NOT NULL,
	PRIMARY KEY (conversation_id, id)
) WITHOUT ROWID;
