-- Idem journal, schema version 4 (SQLite).
-- idem_operation_undelivered held every queued row not yet delivered, the unfinished ones too: a
-- resume of 100,000 queued operations walked 100,000 entries (and looked each row up) to find the
-- few owed outcomes, and each terminal transition deleted and re-inserted its row's entry. It now
-- holds only the rows the look for owed outcomes returns: queued, finished, not delivered, not
-- quarantined. The predicate repeats OperationTable's undelivered() word for word, so that the
-- query may name the index (INDEXED BY: SQLite has no statistics to choose it by).
DROP INDEX idem_operation_undelivered;
CREATE INDEX idem_operation_undelivered ON idem_operation (scope, operation, op_key)
  WHERE queued = 1 AND outcome_delivered_at IS NULL AND state IN ('SUCCEEDED', 'FAILED', 'UNCERTAIN')
    AND quarantined_at IS NULL;
