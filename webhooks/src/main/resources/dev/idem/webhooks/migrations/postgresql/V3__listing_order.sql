-- The listing order (InboxStore.list, the CLI's webhooks list and dead-letters): one state's
-- events by received time, then source and event id. Without it each page read every event of the
-- state and sorted them all; with it a page walks the index from its cursor and reads one page.
-- The columns repeat the listing's WHERE and ORDER BY word for word. Built in the migration's
-- transaction, which blocks the inbox's writes on this table while the index is built.
CREATE INDEX idem_webhook_inbox_listing ON idem_webhook_inbox (state, received_at, source, event_id);
