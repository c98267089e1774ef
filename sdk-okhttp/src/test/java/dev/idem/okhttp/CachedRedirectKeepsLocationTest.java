package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.nio.file.Path;
import okhttp3.Cache;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The follow-up guard holds a keyed attempt's Location back from OkHttp below its
 * {@code CacheInterceptor}; the client's {@link Cache} must not store that altered redirect, which
 * every later call of the URL (untagged ones included) would get as a 3xx it cannot follow. The
 * keyed call still gets its redirect with its Location and its own Cache-Control. Before: the
 * cache stored the 308 without its Location, and a later untagged GET got that 308.
 *
 * <p>Found by a review on 2026-12-04; failed before the fix.
 */
class CachedRedirectKeepsLocationTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();

  @Test
  void aKeyedGetsRedirectIsNotCachedWithoutItsLocation(@TempDir Path dir) throws Exception {
    IdempotentServer server = serverExtension.server();
    IdemOkHttp idem = f.idem();
    try (Cache cache = new Cache(dir.toFile(), 1 << 20)) {
      OkHttpClient client = idem.install(new OkHttpClient.Builder().cache(cache)).build();
      server.plan().next(Fault.redirect(308, "/v2/orders/7").withHeader("Cache-Control", "max-age=600"));

      Request tagged = new Request.Builder().url(server.url("/orders/7").toString())
          .tag(IdempotentOperation.class, IdempotentOperation.of("read-order")).build();
      try (Response r = client.newCall(tagged).execute()) {
        assertEquals(308, r.code());
        assertEquals("/v2/orders/7", r.header("Location"), "the keyed call gets its Location");
        assertEquals("max-age=600", r.header("Cache-Control"), "and the server's Cache-Control");
      }

      // A plain GET of the same URL goes to the server (the server answers it 201 now), not to a
      // cached 308 without a Location, which OkHttp could not follow.
      try (Response r = client.newCall(new Request.Builder().url(server.url("/orders/7").toString()).build())
          .execute()) {
        assertEquals(201, r.code(), "the untagged GET got " + r.code() + " " + r.headers());
        assertNull(r.cacheResponse(), "nothing of the keyed attempt's altered redirect was cached");
      }
      assertEquals(2, server.requestCount());
    }
  }
}
