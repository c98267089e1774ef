-- A later version of the test schema (RvRstoreDowngradeAfterCrashTest).
CREATE TABLE t2 (id INTEGER PRIMARY KEY);
