package dev.idem.core.spi.adapter;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.http.KeyHeader;
import dev.idem.core.http.KeyHeaderFormat;
import dev.idem.core.http.ProtocolHeaders;
import dev.idem.core.OperationFailedException;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.internal.UrlCredentials;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.http.UntaggedPolicy;
import dev.idem.core.http.UntaggedRequestException;
import dev.idem.core.internal.ExecutorAccess;
import dev.idem.core.internal.HeaderMaps;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Future;
import java.util.function.IntFunction;

/**
 * The rules every HTTP adapter applies, held once so that adapters cannot disagree:
 * <ul>
 *   <li><b>Untagged requests</b> ({@link #untaggedOperationName}): only POST and PATCH are subject
 *       to the {@link UntaggedPolicy}; under {@code FRESH_KEY} the operation is named
 *       {@code untagged-post} or {@code untagged-patch} (see {@link #untaggedName}), which is the
 *       name to register a resume transport for; under {@code REJECT} the call fails with
 *       {@link UntaggedRequestException}.</li>
 *   <li><b>A key header already on the request</b> ({@link #keyFor}): read by the one parser the
 *       server guard uses too ({@link KeyHeader}); it is the app's key, and
 *       the operation uses it, whether the call is tagged, named or untagged. Replacing it would
 *       send a key the app never saw, so the app's own retry of the call (which carries its header
 *       again) would become a second operation and a second effect; passing it through unjournaled
 *       would give up the durable key for exactly the calls whose author cared about keys. If the
 *       app also gave the operation a different key of its own, the call is refused before
 *       anything is journaled or sent: one of the two is a bug, and Idem cannot tell which.
 *       Snapshots never hold the key header, so a resumed attempt sends the journaled key.</li>
 *   <li><b>The server's "key missing" answer</b> ({@link #isKeyMissing}): exactly what the
 *       executor's {@link dev.idem.core.ProtocolStatuses} calls key missing, the same rule the
 *       executor used to end the operation FAILED at once. For a server whose answer does not
 *       mention idempotency, configure {@code ProtocolStatuses.builder().keyMissing(...)}.</li>
 *   <li><b>How an ending becomes an answer</b> ({@link #settle(Outcome)},
 *       {@link #settle(OperationFailedException)}): SUCCEEDED and FAILED-with-a-response are
 *       answered with the response, as the HTTP client would have; FAILED without a response and
 *       FAILED because the key is missing (a configuration error) are thrown; everything else
 *       (UNCERTAIN, PENDING, key reused) is thrown by the executor already.</li>
 *   <li><b>The replay marker</b> ({@link #isReplay}): the executor's
 *       {@link IdempotentExecutor#replayHeader()}, not a name of the adapter's own.</li>
 *   <li><b>What of a response is read and kept</b>: {@link CaptureRule}, read under a
 *       {@link CaptureDeadline}.</li>
 * </ul>
 *
 * <p>Immutable and thread-safe.
 */
public final class AdapterSupport {
  /** The default key header name, {@value}. */
  public static final String DEFAULT_KEY_HEADER = ProtocolHeaders.KEY;

  private final IdempotentExecutor executor;
  private final String headerName;
  private final KeyHeaderFormat format;
  /**
   * The executor's replay header, lower-case: the snapshots' names are, and a lower-case name is
   * looked up as it is, where the executor's spelling would be lower-cased into a copy per call.
   */
  private final String replayHeaderKey;
  private final UntaggedPolicy untaggedPolicy;

  private AdapterSupport(IdempotentExecutor executor, String headerName, KeyHeaderFormat format,
      UntaggedPolicy untaggedPolicy) {
    this.executor = Objects.requireNonNull(executor, "executor");
    this.headerName = checkHeaderName(headerName);
    this.format = Objects.requireNonNull(format, "format");
    this.replayHeaderKey = executor.replayHeader().toLowerCase(Locale.ROOT);
    this.untaggedPolicy = Objects.requireNonNull(untaggedPolicy, "untaggedPolicy");
  }

  /**
   * The rules for one adapter instance.
   *
   * @param executor runs every operation; its protocol statuses and replay header apply
   * @param headerName the key header's name
   * @param format how the key is written into the header
   * @param untaggedPolicy what happens to an untagged POST or PATCH
   * @return the rules
   * @throws NullPointerException if any argument is null
   * @throws IllegalArgumentException if {@code headerName} is not a valid header name
   */
  public static AdapterSupport of(IdempotentExecutor executor, String headerName, KeyHeaderFormat format,
      UntaggedPolicy untaggedPolicy) {
    return new AdapterSupport(executor, headerName, format, untaggedPolicy);
  }

  /**
   * Checks a key header name: printable ASCII without spaces or colons.
   *
   * @param name the name
   * @return the name
   * @throws NullPointerException if {@code name} is null
   * @throws IllegalArgumentException if it is blank or not a valid header name
   */
  public static String checkHeaderName(String name) {
    Objects.requireNonNull(name, "headerName");
    if (name.isBlank() || !name.chars().allMatch(c -> c > 0x20 && c < 0x7f && c != ':')) {
      throw new IllegalArgumentException("not a valid header name: '" + name + "'");
    }
    return name;
  }

  /**
   * The operation name of an untagged call: {@code untagged-} and the method in lower case, such
   * as {@code untagged-post}. Resume transports and outbox registrations use this name.
   *
   * @param method the HTTP method
   * @return the operation name
   */
  public static String untaggedName(String method) {
    return "untagged-" + method.toLowerCase(Locale.ROOT);
  }

  /**
   * Applies the untagged policy to a request the app did not mark as an operation.
   *
   * @param method the HTTP method
   * @param target the URL or path, for the message only; its credentials (user info, a
   *     credential-named query or path parameter, the fragment) are redacted in it
   * @return the operation name to key the call under, or empty to pass it through untouched
   * @throws UntaggedRequestException under {@link UntaggedPolicy#REJECT}, for a POST or PATCH
   */
  public Optional<String> untaggedOperationName(String method, String target) throws UntaggedRequestException {
    String m = method.toUpperCase(Locale.ROOT);
    if (!(m.equals("POST") || m.equals("PATCH"))) {
      return Optional.empty();
    }
    return switch (untaggedPolicy) {
      case PASS_THROUGH -> Optional.empty();
      case FRESH_KEY -> Optional.of(untaggedName(m));
      // Redacted here, whatever the adapter passed: a path's ;jsessionid= is a credential, and
      // apps log this exception.
      case REJECT -> throw new UntaggedRequestException("untagged " + m + " "
          + UrlCredentials.defaults().redact(target)
          + " refused by UntaggedPolicy.REJECT: mark it as an operation (an IdempotentOperation tag, or"
          + " client.operation(name)), or choose another UntaggedPolicy; nothing was sent");
    };
  }

  /**
   * Whether an untagged call that {@link #untaggedOperationName} keyed (under
   * {@link UntaggedPolicy#FRESH_KEY}) must go out as under {@code PASS_THROUGH} instead: its form
   * body ({@code application/x-www-form-urlencoded}) holds a field the executor's query rule names
   * a credential (an OAuth token request's {@code client_secret=}, a password grant's
   * {@code password=}). The executor refuses to journal such a body, and refusing an untagged
   * call the app never marked would break its token calls; unjournaled, the credential stays out
   * of the journal as the call goes out once, as every untagged call does under
   * {@code PASS_THROUGH}. Ask before keying the call: the executor refuses every operation whose
   * form body holds such a field, whatever its name ({@link IdempotentExecutor#execute}), so a
   * tagged call is refused, and an untagged one an adapter keyed without asking would be too.
   *
   * @param contentType the request's Content-Type, or null
   * @param body the request body, not changed
   * @return true if the call must pass through unjournaled
   */
  public boolean passesUntaggedUnjournaled(String contentType, byte[] body) {
    return ExecutorAccess.get().secrets(executor).findInFormBody(contentType, body) != null;
  }

  /**
   * The rule for a key header already on the request (see the class comment).
   *
   * @param headerValues the values of {@link #headerName()} on the request, possibly empty
   * @param chosen the key the app gave the operation itself, or null if it gave none
   * @return the key to use: the header's, else {@code chosen} (null if neither, and the caller
   *     draws a fresh one)
   * @throws IdempotencyException if the header is not one valid key by the rule of
   *     {@link KeyHeader} (two field lines, even of one key, are refused, as the server guard
   *     refuses them), or if the header and {@code chosen} differ; nothing was sent
   */
  public IdempotencyKey keyFor(List<String> headerValues, IdempotencyKey chosen) throws IdempotencyException {
    KeyHeader header = KeyHeader.parse(headerValues);
    if (header.problem().isPresent()) {
      throw new IdempotencyException("the request's own " + headerName + " header has " + header.problem().get()
          + "; nothing was sent", null);
    }
    IdempotencyKey onRequest = header.key().orElse(null);
    if (onRequest == null) {
      return chosen;
    }
    if (chosen != null && !chosen.equals(onRequest)) {
      throw new IdempotencyException("the request's " + headerName + " header and the key given to its operation"
          + " differ; send one key (drop the header, or give the operation the header's key). Nothing was sent",
          null);
    }
    return onRequest;
  }

  /**
   * The one "key missing" rule (see the class comment).
   *
   * @param response a response
   * @return true if the executor's protocol statuses call it key missing
   */
  public boolean isKeyMissing(ResponseSnapshot response) {
    return executor.protocol().isKeyMissing(response);
  }

  /**
   * Whether the server marked a response as a replay, by the executor's replay header.
   *
   * @param response a response
   * @return true if the executor's replay header says {@code true} (any case, trimmed)
   */
  public boolean isReplay(ResponseSnapshot response) {
    return response.header(replayHeaderKey).map(v -> v.trim().equalsIgnoreCase("true")).orElse(false);
  }

  /**
   * The answer for a SUCCEEDED operation.
   *
   * @param outcome the executor's outcome
   * @return the settlement, SUCCEEDED
   */
  public Settlement settle(Outcome outcome) {
    return new Settlement(outcome.operationId(), outcome.response(), OperationState.SUCCEEDED, outcome.replayed(),
        outcome.fromJournal(), outcome.attempts());
  }

  /**
   * The answer for a FAILED operation: its last response, as the HTTP client would have returned
   * it, or the exception.
   *
   * @param failure the executor's exception
   * @return the settlement, FAILED with the last response
   * @throws OperationFailedException {@code failure} itself when no response came back, or a new
   *     one (caused by it, with the same operation, attempts and response) when the server says
   *     the key is missing: a configuration error, never an answer to hand on
   */
  public Settlement settle(OperationFailedException failure) throws OperationFailedException {
    Optional<ResponseSnapshot> last = failure.lastResponse();
    if (last.isEmpty()) {
      throw failure;
    }
    if (isKeyMissing(last.get())) {
      throw new OperationFailedException("operation " + failure.operationId() + " FAILED: the server answered "
          + last.get().status() + " and says the idempotency key is missing or malformed. Check the key header"
          + " configuration (name '" + headerName + "', format " + format + ") against the server's", failure,
          failure.operationId(), failure.attempts(), last.get(), failure.fromJournal());
    }
    return new Settlement(failure.operationId(), last.get(), OperationState.FAILED, isReplay(last.get()),
        failure.fromJournal(), failure.attempts());
  }

  /**
   * The executor.
   *
   * @return the executor that runs every operation
   */
  public IdempotentExecutor executor() {
    return executor;
  }

  /**
   * Runs {@code task} once after {@code delay} on the executor's scheduler
   * ({@link IdempotentExecutor.Builder#scheduler}), the one that times the executor's own attempt
   * timeouts: an adapter's timer for an attempt then keeps the same time as the executor's (a
   * {@link dev.idem.core.testing.VirtualTime} in tests). For an attempt the executor no longer
   * bounds: one whose caller went away, which no attempt timeout may bound (see {@link AttemptBound}).
   *
   * @param task what to run; short, and it must not call the journal (it shares the executor's timer thread)
   * @param delay how long to wait first
   * @return a handle that cancels the task
   * @throws java.util.concurrent.RejectedExecutionException if the scheduler takes no more tasks
   *     (the executor is closed, or the app's scheduler is shut down)
   */
  public Future<?> schedule(Runnable task, Duration delay) {
    return ExecutorAccess.get().lifecycle(executor).scheduler()
        .schedule(Objects.requireNonNull(task, "task"), Objects.requireNonNull(delay, "delay"));
  }

  /**
   * The cancel of the next synchronous call this thread makes to {@link #executor()}
   * ({@link IdempotentExecutor#execute} or {@link IdempotentExecutor#resume}), for an HTTP client
   * that cancels a call without interrupting its thread: take it just before that call and close
   * it once the call has returned (try-with-resources); its {@link CallCancel#cancel()} ends the
   * call's backoff and its wait for a concurrent execution, and touches no other call of the
   * thread (one nested in it included, and one made between taking it and calling the executor
   * with a handle of its own: the handle taken last names the call that starts next). Costs a
   * thread-local read and a small object; no lock unless cancelled.
   *
   * @return the handle, for the call made next on this thread
   */
  public CallCancel callCancel() {
    return new CallCancel(ExecutorAccess.get().lifecycle(executor));
  }

  /**
   * The key header's name.
   *
   * @return the key header's name
   */
  public String headerName() {
    return headerName;
  }

  /**
   * How the key is written.
   *
   * @return the key header format
   */
  public KeyHeaderFormat format() {
    return format;
  }

  /**
   * What happens to an untagged POST or PATCH.
   *
   * @return the untagged policy
   */
  public UntaggedPolicy untaggedPolicy() {
    return untaggedPolicy;
  }

  /**
   * The header value for a key.
   *
   * @param key the key
   * @return the key written in this adapter's format
   */
  public String headerValue(IdempotencyKey key) {
    return format.format(key);
  }

  /**
   * A header map in the form request and response snapshots keep (names in lower case, sorted; the
   * values of names that differ only in case merged in line order), built from a message's header
   * lines as the adapter's client holds them: a snapshot takes such a map as it is, where a map of
   * any other kind is copied into that form again.
   *
   * @param lines the number of header lines
   * @param name the name of line {@code i}, any case
   * @param value the value of line {@code i}
   * @return an unmodifiable map by lower-case name
   * @throws NullPointerException if a name or value is null
   */
  public static Map<String, List<String>> headerLines(int lines, IntFunction<String> name, IntFunction<String> value) {
    HeaderMaps.Builder map = new HeaderMaps.Builder();
    for (int i = 0; i < lines; i++) {
      map.add(name.apply(i), value.apply(i));
    }
    return map.build();
  }
}
