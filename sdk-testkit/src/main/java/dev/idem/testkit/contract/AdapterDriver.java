package dev.idem.testkit.contract;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.http.KeyHeaderFormat;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.core.http.UntaggedPolicy;
import dev.idem.core.spi.Transport;
import dev.idem.core.testing.VirtualTime;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Drives one adapter in one calling style for {@link AdapterContract}. An implementation builds
 * the adapter over the executor it is given and translates {@link Call}s into the adapter's own
 * requests; it must not add behaviour of its own (no retries, no mapping of exceptions beyond
 * unwrapping an asynchronous call's failure), or the contract would test the driver.
 */
public interface AdapterDriver {
  /**
   * Builds the adapter under test.
   *
   * @param setup the executor, virtual time and adapter settings for one scenario
   * @return the adapter, ready to send
   * @throws Exception if it cannot be built
   */
  Session open(Setup setup) throws Exception;

  /**
   * Whether the HTTP client under the adapter follows redirects of the calls Idem passes through
   * (OkHttp by default; a java.net.http client built with {@code Redirect.NORMAL}). The scenario
   * that checks Idem leaves those redirects to the client runs only where there are some to leave.
   *
   * @return true by default
   */
  default boolean clientFollowsRedirects() {
    return true;
  }

  /**
   * What one scenario gives the adapter.
   *
   * @param executor the executor to build the adapter over
   * @param time the executor's virtual time; asynchronous drivers run its due tasks while they
   *     wait (see {@link AdapterContract#await})
   * @param keyHeader the key header name
   * @param format how the key is written
   * @param untagged the untagged policy
   */
  record Setup(IdempotentExecutor executor, VirtualTime time, String keyHeader, KeyHeaderFormat format,
      UntaggedPolicy untagged) {
    /**
     * Checks the components.
     *
     * @param executor the executor
     * @param time the virtual time
     * @param keyHeader the key header name
     * @param format the key format
     * @param untagged the untagged policy
     * @throws NullPointerException if any is null
     */
    public Setup {
      Objects.requireNonNull(executor, "executor");
      Objects.requireNonNull(time, "time");
      Objects.requireNonNull(keyHeader, "keyHeader");
      Objects.requireNonNull(format, "format");
      Objects.requireNonNull(untagged, "untagged");
    }
  }

  /** One adapter instance under test. */
  interface Session {
    /**
     * Sends a JSON POST and waits for the answer.
     *
     * @param call what to send
     * @return the answer
     * @throws Exception what the adapter threw, unwrapped from any asynchronous wrapper
     */
    Reply send(Call call) throws Exception;

    /**
     * Journals a JSON POST for queued delivery through the adapter's own request type.
     *
     * @param call what to journal; {@link Call#operation()} must be set
     * @return the operation's identity
     * @throws Exception what the adapter threw
     */
    OperationId enqueue(Call call) throws Exception;

    /**
     * The transport an outbox registers to deliver this adapter's queued operations.
     *
     * @return the transport
     */
    Transport resumeTransport();
  }

  /**
   * One JSON POST.
   *
   * @param url where to
   * @param operation the operation name, or null for an untagged request
   * @param key the key given to the operation, or null to let the adapter draw one
   * @param json the body
   * @param headers extra request headers (a key header, Authorization)
   */
  record Call(URI url, String operation, IdempotencyKey key, String json, Map<String, String> headers) {
    /**
     * Checks and copies the components.
     *
     * @param url where to
     * @param operation the operation name, or null
     * @param key the key, or null
     * @param json the body
     * @param headers extra headers; copied
     * @throws NullPointerException if {@code url}, {@code json} or {@code headers} is null
     */
    public Call {
      Objects.requireNonNull(url, "url");
      Objects.requireNonNull(json, "json");
      headers = Map.copyOf(headers);
    }
  }

  /**
   * The adapter's answer, as the app would read it.
   *
   * @param status the HTTP status
   * @param body the body, as text
   * @param operationId the operation it settled, or empty for a call the adapter passed through
   * @param state SUCCEEDED or FAILED, or empty for a call passed through
   * @param replayed whether the adapter says the server replayed an earlier result
   * @param headers the response headers as the app reads them, names lower-cased
   */
  record Reply(int status, String body, Optional<OperationId> operationId, Optional<OperationState> state,
      boolean replayed, Map<String, List<String>> headers) {
    /**
     * Checks and copies the components.
     *
     * @param status the HTTP status
     * @param body the body
     * @param operationId the operation, or empty
     * @param state the state, or empty
     * @param replayed whether replayed
     * @param headers the headers; copied, names lower-cased
     */
    public Reply {
      Map<String, List<String>> lower = new java.util.TreeMap<>();
      headers.forEach((name, values) -> lower.computeIfAbsent(name.toLowerCase(java.util.Locale.ROOT),
          n -> new java.util.ArrayList<>()).addAll(values));
      lower.replaceAll((name, values) -> List.copyOf(values));
      headers = java.util.Collections.unmodifiableMap(lower);
    }

    /**
     * A reply without headers, for drivers written before headers were compared.
     *
     * @param status the HTTP status
     * @param body the body
     * @param operationId the operation, or empty
     * @param state the state, or empty
     * @param replayed whether replayed
     */
    public Reply(int status, String body, Optional<OperationId> operationId, Optional<OperationState> state,
        boolean replayed) {
      this(status, body, operationId, state, replayed, Map.of());
    }

    /**
     * The first value of a response header.
     *
     * @param name the header name, any case
     * @return its first value, or empty
     */
    public Optional<String> header(String name) {
      return headers.getOrDefault(name.toLowerCase(java.util.Locale.ROOT), List.of()).stream().findFirst();
    }
  }
}
