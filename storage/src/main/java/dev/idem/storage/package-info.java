/**
 * Idem's one storage layer, for Idem's own modules, no compatibility promise: the embedded SQLite
 * opener (directory, single-owner lock, owner-only permissions, verified WAL mode, integrity and
 * WAL checks), the group-commit writer, the PostgreSQL path (a connection per unit of work), the
 * dialects and the migrator that the journal (persistence), the guard (server) and the webhook
 * inbox (webhooks) all run on. Apps never use it directly; its types may change in any release.
 */
package dev.idem.storage;
