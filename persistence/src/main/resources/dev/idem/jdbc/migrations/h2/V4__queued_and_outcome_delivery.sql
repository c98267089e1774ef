-- Idem journal, schema version 4 (H2).
-- queued: 1 if the operation was journaled for a deliverer to send later (an outbox submission,
-- IdempotentExecutor.enqueue), 0 if its caller sent it at once. A queued operation's first claim is
-- durable before its attempt leaves, so after a crash a queued row still at generation 0 was never
-- sent, and crash recovery leaves it alone. Rows from before this version count as inline (0): the
-- cautious reading, under which a never-claimed row found after a crash counts as maybe sent.
-- outcome_delivered_at: when a resume handler or an outbox awaiter was recorded as having received
-- the outcome (nanoseconds since the epoch), or NULL. A queued, finished row without it is owed to
-- a handler; rows from before this version are inline and never handed over again.
-- H2 has no partial index; its look for owed outcomes reads the terminal rows (H2 is accepted for
-- apps that already run it, and is not recommended for the journal).
ALTER TABLE idem_operation ADD COLUMN IF NOT EXISTS queued SMALLINT DEFAULT 0 NOT NULL;
ALTER TABLE idem_operation ADD COLUMN IF NOT EXISTS outcome_delivered_at BIGINT;
