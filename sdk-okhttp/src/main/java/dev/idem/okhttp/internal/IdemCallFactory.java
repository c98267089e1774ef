package dev.idem.okhttp.internal;

import dev.idem.core.spi.adapter.AdapterSupport;
import dev.idem.okhttp.IdempotentOperation;
import okhttp3.Call;
import okhttp3.OkHttpClient;
import okhttp3.Request;

/**
 * Makes {@link IdemCall}s for requests tagged with an {@link IdempotentOperation}, and plain calls
 * (through the idempotency interceptor, so the untagged policy applies) for the others. The client
 * gets the interceptor and the {@link FollowUpGuard} added if it does not have them yet; the copy
 * shares the app's connection pool and dispatcher. Thread-safe.
 */
public final class IdemCallFactory implements Call.Factory {
  private final OkHttpClient client;
  private final AdapterSupport settings;
  private final long maxBodyBytes;

  public IdemCallFactory(OkHttpClient client, AdapterSupport settings, IdempotencyInterceptor interceptor) {
    this.client = FollowUpGuard.installedIn(client, interceptor);
    this.settings = settings;
    this.maxBodyBytes = interceptor.maxBodyBytes();
  }

  @Override
  public Call newCall(Request request) {
    IdempotentOperation op = request.tag(Tags.OPERATION);
    if (op == null) {
      return client.newCall(request);
    }
    return new IdemCall(this, request, op);
  }

  OkHttpClient client() {
    return client;
  }

  AdapterSupport settings() {
    return settings;
  }

  long maxBodyBytes() {
    return maxBodyBytes;
  }
}
