package dev.idem.spring.client;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.core.spi.adapter.Settlement;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * Marks one call of a {@code RestClient} or {@code WebClient} as a logical operation, through a
 * request attribute that the server never sees, and tells afterwards what Idem did with it:
 *
 * <pre>{@code
 * IdempotentCall call = IdempotentCall.named("create-order");
 * Order order = restClient.post().uri("/orders").attributes(call).body(draft).retrieve().body(Order.class);
 * boolean replayed = call.replayed();
 * }</pre>
 *
 * <p>The key is fixed at the first send: the one given to {@link #withKey}, else a key header the
 * request already carries, else a fresh UUIDv7. Sending the same {@code IdempotentCall} again (the
 * app's own retry, say after an {@link dev.idem.core.OperationUncertainException}) sends the same
 * key, so the journal and the server see the same operation. Make a new one per logical operation.
 *
 * <p>With {@code RestTemplate}, which has no request attributes, untagged POST and PATCH calls are
 * handled by the untagged policy; name operations by calling through
 * {@code RestClient.create(restTemplate)}, which shares the template's configuration.
 *
 * <p>Thread-safe: the interceptor or filter records the result from its own thread; read it after
 * the call returned.
 */
public final class IdempotentCall implements Consumer<Map<String, Object>> {
  /** The request attribute under which a call is found. */
  public static final String ATTRIBUTE = IdempotentCall.class.getName();

  private final String operation;
  private final AtomicReference<IdempotencyKey> key;
  private volatile Settlement settlement;

  private IdempotentCall(String operation, IdempotencyKey key) {
    this.operation = Objects.requireNonNull(operation, "operation");
    if (operation.isBlank()) {
      throw new IllegalArgumentException("an operation name must not be blank");
    }
    this.key = new AtomicReference<>(key);
  }

  /**
   * A call of the operation named {@code operation}, such as {@code create-order}; its key is
   * drawn (or taken from the request's key header) at the first send.
   *
   * @param operation the operation name, 1 to 200 characters, the same on every instance that
   *     must deliver it after a restart (outbox registrations use it)
   * @return the call, to pass to {@code attributes(...)}
   * @throws IllegalArgumentException if the name is blank
   */
  public static IdempotentCall named(String operation) {
    return new IdempotentCall(operation, null);
  }

  /**
   * The same operation with a key of the app's own (a reference-derived key, or one the app
   * stored); a key header on the request must then carry the same key, or the call is refused
   * before anything is journaled or sent.
   *
   * @param key the key
   * @return a new call with that key
   */
  public IdempotentCall withKey(IdempotencyKey key) {
    return new IdempotentCall(operation, Objects.requireNonNull(key, "key"));
  }

  /**
   * The call found among a request's attributes.
   *
   * @param attributes the request's attributes
   * @return the call, or empty for an untagged request
   */
  public static Optional<IdempotentCall> from(Map<String, Object> attributes) {
    Object v = attributes.get(ATTRIBUTE);
    return v instanceof IdempotentCall c ? Optional.of(c) : Optional.empty();
  }

  /** Puts this call among the request's attributes; pass the call itself to {@code attributes(...)}. */
  @Override
  public void accept(Map<String, Object> attributes) {
    attributes.put(ATTRIBUTE, this);
  }

  /**
   * The operation name.
   *
   * @return the operation name
   */
  public String operation() {
    return operation;
  }

  /**
   * The key: the one given, or the one fixed by the first send.
   *
   * @return the key, or empty before the first send of a call given none
   */
  public Optional<IdempotencyKey> key() {
    return Optional.ofNullable(key.get());
  }

  /**
   * Fixes the key at the first send and returns the key of every send. Used by the adapters.
   *
   * @param candidate the key this send would use (the request's header or a fresh one)
   * @return the call's key: {@code candidate} if none was fixed yet
   */
  IdempotencyKey fix(IdempotencyKey candidate) {
    key.compareAndSet(null, candidate);
    return key.get();
  }

  void settled(Settlement s) {
    this.settlement = s;
  }

  /**
   * The operation, once a response was handed over.
   *
   * @return the operation's identity, or empty if no response was handed over (yet)
   */
  public Optional<OperationId> operationId() {
    Settlement s = settlement;
    return s == null ? Optional.empty() : Optional.of(s.operationId());
  }

  /**
   * How the operation ended, once a response was handed over: SUCCEEDED, or FAILED with the
   * server's response (a permanent 4xx, say). Every other ending is thrown.
   *
   * @return the state, or empty if no response was handed over (yet)
   */
  public Optional<OperationState> state() {
    Settlement s = settlement;
    return s == null ? Optional.empty() : Optional.of(s.state());
  }

  /**
   * Whether the server marked the response as a replay of an earlier attempt's result.
   *
   * @return true if it did; false before a response was handed over
   */
  public boolean replayed() {
    Settlement s = settlement;
    return s != null && s.replayed();
  }

  /**
   * Whether this send sent nothing because the journal already had the operation's ending.
   *
   * @return true if the response came from the journal; false before a response was handed over
   */
  public boolean fromJournal() {
    Settlement s = settlement;
    return s != null && s.fromJournal();
  }

  @Override
  public String toString() {
    return "IdempotentCall[" + operation + "]";
  }
}
