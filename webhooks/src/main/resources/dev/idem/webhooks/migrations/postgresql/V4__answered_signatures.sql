-- The signatures of deliveries answered for an event already stored (a provider's retry signed
-- again, a conflicting delivery) by a source whose event id is not signed: a replay of one under
-- a new id is refused as a replay of the accepted delivery is (InboxStore.insert). Written only
-- for those deliveries, never when an event is first accepted. A signature with a signed time is
-- kept until that time is outside the window, one without as long as its event (purgeDone).
-- IF NOT EXISTS: an inbox whose version row was rolled back by hand runs it again harmlessly.
CREATE TABLE IF NOT EXISTS idem_webhook_signatures (
  source VARCHAR(64) NOT NULL,
  signature_digest BYTEA NOT NULL,
  event_id VARCHAR(255) NOT NULL,
  signed_at BIGINT,
  PRIMARY KEY (source, signature_digest));
