package dev.idem.okhttp.internal;

import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.adapter.AdapterSupport;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.ResponseSnapshot;
import dev.idem.core.spi.Transport;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import okhttp3.Call;
import okhttp3.OkHttpClient;
import okhttp3.Request;

/**
 * Sends journaled snapshots through the app's own {@link OkHttpClient}, for operations the executor
 * drives outside a live call (resumed after a restart, or re-driven). Going through the app's
 * client, not a bare one, is the point: its interceptors re-apply Authorization and the other
 * secrets that were kept out of the journal, and its timeouts, proxy and TLS settings apply.
 *
 * <p>Each attempt is tagged {@link ResumeAttempt}, so the idempotency interceptor in that client
 * lets it through instead of starting a new operation. Thread-safe.
 */
public final class ClientTransport implements Transport, AsyncTransport {
  private final OkHttpClient client;
  private final AdapterSupport settings;

  public ClientTransport(OkHttpClient client, AdapterSupport settings) {
    this.client = client;
    this.settings = settings;
  }

  @Override
  public ResponseSnapshot send(RequestSnapshot request, IdempotencyKey key) throws IOException {
    return OkHttpSnapshots.buffer(newCall(request, key).execute());
  }

  @Override
  public CompletableFuture<ResponseSnapshot> sendAsync(RequestSnapshot request, IdempotencyKey key) {
    return CallFutures.enqueue(newCall(request, key), OkHttpSnapshots::buffer);
  }

  private Call newCall(RequestSnapshot request, IdempotencyKey key) {
    Request r = OkHttpSnapshots.toRequest(request).newBuilder()
        .header(settings.headerName(), settings.headerValue(key))
        .tag(ResumeAttempt.class, ResumeAttempt.INSTANCE)
        .build();
    return client.newCall(r);
  }
}
