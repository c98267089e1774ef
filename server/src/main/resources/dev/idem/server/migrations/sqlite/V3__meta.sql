-- The embedded store's id, also in its .id file beside the database (see EmbeddedFiles).
CREATE TABLE idem_server_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
