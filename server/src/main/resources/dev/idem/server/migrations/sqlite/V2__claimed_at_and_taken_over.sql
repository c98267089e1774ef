-- When the current claim was made (for operators; 0 in older rows), and whether it took over an
-- expired claim. The operator's queries and the gauges read by state and age.
ALTER TABLE idem_server_record ADD COLUMN claimed_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE idem_server_record ADD COLUMN taken_over BIGINT NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS idem_server_record_state ON idem_server_record (state, claimed_at);
