-- 003_engine.sql — what the agent engine keeps beyond 001: how each model
-- call of a turn ended, and every tool call with its approval decision.
-- Independent of 002 (secrets), so the two can be applied in either order.

ALTER TABLE turns ADD COLUMN finish_reason TEXT;	-- of the last model call
ALTER TABLE turns ADD COLUMN usage TEXT;		-- JSON: usage summed over the turn's calls
ALTER TABLE turns ADD COLUMN steps INTEGER NOT NULL DEFAULT 0;	-- model calls made

-- One row per tool call the model made. call_id is the id the model's
-- assistant message carries (made unique within its turn by the engine).
-- decision/decided_by are set for calls that needed a decision: decided_by
-- is a user id, "rule:<action> <prefix>", "config:tools.shell_always_allow",
-- "timeout" or "restart".
CREATE TABLE tool_calls (
	turn_id		TEXT NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
	call_id		TEXT NOT NULL,
	conversation_id	TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
	name		TEXT NOT NULL,
	arguments	TEXT NOT NULL,
	command		TEXT,			-- shell calls: what was asked
	needs_approval	INTEGER NOT NULL DEFAULT 0,
	decision	TEXT,			-- approve | deny, NULL while pending
	decided_by	TEXT,
	decided_at	TEXT,
	ok		INTEGER,		-- NULL until it has a result
	created_at	TEXT NOT NULL,
	PRIMARY KEY (turn_id, call_id)
);
CREATE INDEX tool_calls_by_conversation ON tool_calls(conversation_id, call_id);
