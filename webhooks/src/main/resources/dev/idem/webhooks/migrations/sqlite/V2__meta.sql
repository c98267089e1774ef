-- The embedded inbox's id, also in inbox.id beside the database (see EmbeddedFiles).
CREATE TABLE idem_webhook_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
