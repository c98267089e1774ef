package dev.idem.storage;

/**
 * Work whose writes are one statement: it changes the database with at most one statement, and
 * throws only when that statement failed or changed nothing (it may read before and after). Such a
 * unit is atomic without a savepoint: the database undoes a failed statement whole. A store may
 * therefore run it without the savepoint it sets around other units, which saves two statements per
 * unit on the durable call's path (issue 28). Made with {@link SqlWork#singleStatement}.
 *
 * @param <T> the result
 */
@FunctionalInterface
public interface SingleStatementWork<T> extends SqlWork<T> {
}
