-- Idem journal, schema version 2 (H2).
-- Every index is rewritten by the commits of the hot path (begin inserts a row; claim, attempt and
-- transition update state and updated_at). These two served no frequent query:
-- * (state, next_attempt_at): findDue filters on state and pages in identity order; the
--   (state, updated_at) index narrows by state just as well, and due rows are few.
-- * (quarantined_at): only findQuarantined (an admin listing of rare rows) sorts by it.
-- Kept: (state, updated_at) for purge, findByState and findDue; (scope, reference) for
-- findByReference; the primary key for everything by identity.
DROP INDEX IF EXISTS idem_operation_state_next;
DROP INDEX IF EXISTS idem_operation_quarantined;
