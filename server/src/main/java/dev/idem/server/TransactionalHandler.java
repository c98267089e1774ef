package dev.idem.server;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * The business action of a transactional route ({@link IdempotencyGuard#inTransaction}): it writes
 * its effect on the connection it is given, inside the transaction that also holds the claim and
 * will hold the stored result, and returns its response. It must not commit, roll back or close the
 * connection, and should not call slow remote systems (see {@link IdempotencyGuard#inTransaction}).
 */
@FunctionalInterface
public interface TransactionalHandler {
  /**
   * Runs the action once.
   *
   * @param connection the transaction's connection
   * @param claim the operation held, for {@link Claim#operationId()}; null for a request that
   *     carries no key on a route that does not require one (it runs unguarded, still in one
   *     transaction)
   * @param body the request body, as the guard read it
   * @return the response: its status decides, through the storage policy, whether the transaction
   *     commits with the result stored or rolls back; a body over the capture cap is sent in full
   *     but stored without its body
   * @throws SQLException if the action fails: the transaction rolls back and the exception reaches
   *     the caller
   */
  CapturedResponse handle(Connection connection, Claim claim, byte[] body) throws SQLException;
}
