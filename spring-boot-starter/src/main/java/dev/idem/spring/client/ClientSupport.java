package dev.idem.spring.client;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.outbox.OutboxDispatcher;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.adapter.AdapterSupport;
import dev.idem.spring.internal.SpringHeaders;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.RequestEntity;

/**
 * What the RestClient interceptor and the WebClient filter share: the adapter layer's rules
 * ({@link AdapterSupport}), the body cap, the outbox enqueue checks names against, and how a
 * request becomes an operation. Immutable.
 */
final class ClientSupport {
  final AdapterSupport rules;
  final long maxBodyBytes; // 0 or more: AdapterBuilder checks it
  // null, or returns null or none: enqueue checks no name
  private final Supplier<? extends Collection<OutboxDispatcher>> outbox;
  private BoundedJdkRequests jdk; // guarded by this; made by the first resume transport that needs it

  ClientSupport(AdapterSupport rules, long maxBodyBytes, Supplier<? extends Collection<OutboxDispatcher>> outbox) {
    this.rules = rules;
    this.maxBodyBytes = maxBodyBytes;
    this.outbox = outbox;
  }

  IdempotentExecutor executor() {
    return rules.executor();
  }

  /**
   * The JDK client the resume transports without an app factory share: one per interceptor or
   * filter (its connections and selector thread), made when first needed, as Spring's
   * {@code new JdkClientHttpRequestFactory()} makes its client.
   */
  synchronized BoundedJdkRequests jdkRequests() {
    if (jdk == null) {
      jdk = new BoundedJdkRequests(HttpClient.newHttpClient());
    }
    return jdk;
  }

  String keyHeader() {
    return rules.headerName();
  }

  /**
   * The operation name of a request: its call's, or the untagged policy's (empty: pass it through).
   *
   * @throws dev.idem.core.http.UntaggedRequestException under REJECT, for a POST or PATCH
   */
  Optional<String> operationName(IdempotentCall call, String method, URI uri) throws IdempotencyException {
    if (call != null) {
      return Optional.of(call.operation());
    }
    // The path only: a query string may carry what the app considers secret.
    return rules.untaggedOperationName(method, uri.getRawPath());
  }

  /** See {@link dev.idem.core.spi.adapter.AdapterSupport#passesUntaggedUnjournaled}. */
  boolean passesUntaggedUnjournaled(HttpHeaders headers, byte[] body) {
    MediaType type = headers.getContentType();
    return type != null && rules.passesUntaggedUnjournaled(type.toString(), body);
  }

  void checkBody(int length) throws IdempotencyException {
    if (length > maxBodyBytes) {
      throw new IdempotencyException("the request body has " + length + " bytes, over the " + maxBodyBytes
          + " bytes a keyed call may journal (maxBodyBytes); nothing was journaled or sent", null);
    }
  }

  /** The snapshot of a live request: every header (the executor keeps secrets out of the journal) but the key's. */
  RequestSnapshot snapshot(String method, URI uri, HttpHeaders headers, byte[] body) {
    RequestSnapshot.Builder b = RequestSnapshot.builder(method, uri).body(body, headers.getFirst("Content-Type"));
    headers.forEach((name, values) -> {
      if (!name.equalsIgnoreCase(keyHeader())) {
        values.forEach(v -> b.header(name, v));
      }
    });
    return b.build();
  }

  /** The operation of a request, with its key fixed: the call's, the request's key header's, or a fresh one. */
  Operation operation(String name, IdempotentCall call, RequestSnapshot snapshot, HttpHeaders headers)
      throws IdempotencyException {
    List<String> onRequest = SpringHeaders.values(headers, keyHeader());
    IdempotencyKey key = rules.keyFor(onRequest, call == null ? null : call.key().orElse(null));
    if (call != null) {
      key = call.fix(key != null ? key : IdempotencyKey.generate());
    }
    Operation.Builder b = Operation.builder(name, snapshot);
    if (key != null) {
      b.key(key);
    }
    return b.build();
  }

  OperationId enqueue(String operation, IdempotencyKey key, RequestEntity<?> request) throws IdempotencyException {
    Objects.requireNonNull(operation, "operation");
    Objects.requireNonNull(request, "request");
    if (request.getMethod() == null) {
      throw new IllegalArgumentException("the request has no method");
    }
    checkDelivered(operation);
    byte[] body = bytes(request.getBody());
    checkBody(body.length);
    String method = request.getMethod().name();
    RequestSnapshot snapshot = snapshot(method, request.getUrl(), request.getHeaders(), body);
    IdempotentCall call = key == null ? IdempotentCall.named(operation) : IdempotentCall.named(operation).withKey(key);
    return executor().enqueue(operation(operation, call, snapshot, request.getHeaders())).id();
  }

  /**
   * Refuses, before anything is journaled, a name no outbox has a transport for: journaled, it
   * would stay PENDING for good (a dispatcher skips names it does not deliver, at every poll and at
   * the shutdown's drain), while the caller was told it is queued. The same refusal as
   * {@link OutboxDispatcher#submit}'s, against every dispatcher's names: an app may give a slow
   * partner a dispatcher of its own (its own maxInFlight), and that dispatcher delivers its names.
   */
  private void checkDelivered(String operation) {
    Collection<OutboxDispatcher> dispatchers = outbox == null ? null : outbox.get();
    if (dispatchers == null || dispatchers.isEmpty()) {
      return;
    }
    Set<String> names = new TreeSet<>();
    for (OutboxDispatcher d : dispatchers) {
      names.addAll(d.operationNames());
    }
    if (!names.contains(operation)) {
      throw new IllegalArgumentException("no transport is registered for operation '" + operation + "' in the outbox,"
          + " which delivers " + names + "; nothing was journaled. Add the name to"
          + " idem.outbox.operations, or register a transport for it with an OutboxCustomizer bean"
          + " (b.register(\"" + operation + "\", interceptor.resumeTransport(...))) when its calls need headers the"
          + " journal does not keep, such as Authorization");
    }
  }

  private static byte[] bytes(Object body) {
    if (body == null) {
      return new byte[0];
    }
    if (body instanceof byte[] b) {
      return b;
    }
    if (body instanceof CharSequence s) {
      return s.toString().getBytes(StandardCharsets.UTF_8);
    }
    throw new IllegalArgumentException("enqueue takes a request whose body is already encoded (byte[] or String),"
        + " not " + body.getClass().getName() + ": the journal keeps the bytes that every attempt sends");
  }
}
