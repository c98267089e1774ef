-- Idem journal, schema version 3 (H2).
-- A checksum of the stored request bound to its fingerprint: a row whose request no longer matches
-- it (a changed byte of a body, say) is quarantined and never sent under the original key. Rows
-- written before this version have none and are not checked.
ALTER TABLE idem_operation ADD COLUMN IF NOT EXISTS request_check VARCHAR(64);
