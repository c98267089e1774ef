package dev.idem.webhooks.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/**
 * A MacKey keeps a keyed Mac per thread: each key must still MAC under itself however keys and
 * threads interleave (two secrets while rotating, several sources on one request thread).
 */
class MacKeyTest {
  static byte[] reference(String algorithm, byte[] key, byte[]... parts) throws Exception {
    Mac mac = Mac.getInstance(algorithm);
    mac.init(new SecretKeySpec(key, algorithm));
    for (byte[] p : parts) {
      mac.update(p);
    }
    return mac.doFinal();
  }

  static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void keysInterleavedOnOneThreadEachMacUnderTheirOwnKey() throws Exception {
    MacKey current = new MacKey("HmacSHA256", utf8("new-secret"));
    MacKey old = new MacKey("HmacSHA256", utf8("old-secret"));
    MacKey wide = new MacKey("HmacSHA512", utf8("new-secret"));
    for (int i = 0; i < 3; i++) {
      byte[] prefix = utf8("msg_" + i + ".1700000000.");
      byte[] body = utf8("{\"n\":" + i + "}");
      assertArrayEquals(reference("HmacSHA256", utf8("new-secret"), prefix, body), current.mac(prefix, body));
      assertArrayEquals(reference("HmacSHA256", utf8("old-secret"), prefix, body), old.mac(prefix, body));
      assertArrayEquals(reference("HmacSHA512", utf8("new-secret"), prefix, body), wide.mac(prefix, body));
      assertArrayEquals(reference("HmacSHA256", utf8("new-secret"), body), current.mac(body), "a MAC starts afresh");
    }
  }

  @Test
  void threadsSharingAKeyEachGetTheRightMac() throws Exception {
    MacKey key = new MacKey("HmacSHA256", utf8("shared"));
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<?>> runs = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        int thread = t;
        runs.add(pool.submit(() -> {
          for (int i = 0; i < 500; i++) {
            byte[] body = utf8(thread + "/" + i);
            assertArrayEquals(reference("HmacSHA256", utf8("shared"), body), key.mac(body));
          }
          return null;
        }));
      }
      for (Future<?> f : runs) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void anUnknownAlgorithmFailsWhenTheKeyIsMadeNotOnTheFirstDelivery() {
    assertThrows(IllegalArgumentException.class, () -> new MacKey("HmacNope", utf8("k")));
  }
}
