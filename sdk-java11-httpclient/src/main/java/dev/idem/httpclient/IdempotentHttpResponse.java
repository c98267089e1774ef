package dev.idem.httpclient;

import dev.idem.core.AttemptRecord;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import java.net.http.HttpResponse;
import java.util.List;

/**
 * The response of a call that went through Idem: the real status, headers, request, URI and
 * version of the final attempt, the body produced by the caller's {@link HttpResponse.BodyHandler},
 * and what Idem knows about the operation.
 *
 * <p>It is returned for {@link OperationState#SUCCEEDED} operations, and for {@link
 * OperationState#FAILED} ones that ended with a server response (a permanent 4xx, or a 5xx after
 * the attempts ran out with no ambiguous attempt), because {@link java.net.http.HttpClient} does
 * not throw on error statuses either. Immutable.
 *
 * @param <T> the body type
 */
public interface IdempotentHttpResponse<T> extends HttpResponse<T> {
  /**
   * The operation's identity, with the key that went out on every attempt.
   *
   * @return the operation's identity, with the key that went out on every attempt
   */
  OperationId operationId();

  /**
   * {@link OperationState#SUCCEEDED} or {@link OperationState#FAILED}.
   *
   * @return {@link OperationState#SUCCEEDED} or {@link OperationState#FAILED}
   */
  OperationState state();

  /**
   * True if the server marked the response as a replay ({@code Idempotent-Replayed: true} by
   * default): an earlier attempt with this key had already taken effect, and this is its result.
   *
   * @return true if the server marked the response as a replay ({@code Idempotent-Replayed: true} by default): an earlier attempt with this key had already taken effect, and this is its result
   */
  boolean replayed();

  /**
   * True if nothing was sent by this call because the journal already held the outcome; then
   * {@link #request()} is the caller's request and {@link #version()} is a best guess.
   *
   * @return true if nothing was sent by this call because the journal already held the outcome
   */
  boolean fromJournal();

  /**
   * The operation's attempt history, oldest first.
   *
   * @return the operation's attempt history, oldest first
   */
  List<AttemptRecord> attempts();
}
