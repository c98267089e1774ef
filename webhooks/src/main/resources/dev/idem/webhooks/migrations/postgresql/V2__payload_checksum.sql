-- Each accepted payload's SHA-256, checked before a handler gets it (issue 26). Rows accepted
-- before this column have none, and are handed over as before.
ALTER TABLE idem_webhook_inbox ADD COLUMN body_sha256 BYTEA;
