package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import dev.idem.testkit.support.HeapLimitedJvm;
import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import okhttp3.HttpUrl;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * An IOException thrown by an {@code enqueue} callback's {@code onResponse}, on a call of
 * {@link IdemOkHttp#callFactory}, was swallowed without a word, where OkHttp logs "Callback failure
 * for ..." for its own calls: the app's bug vanished. It is logged at WARN through SLF4J, with the
 * call's method and redacted URL, never its query or headers. Run in a child JVM
 * ({@link CallbackFailureChild}), whose log goes to the output read here.
 */
class CallbackFailureLoggedTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  @Test
  void anIOExceptionFromOnResponseIsLoggedAtWarnWithoutSecrets(@TempDir Path dir) throws Exception {
    IdempotentServer server = serverExtension.server();
    URI url = server.url("/orders?customer=c-secret-42");

    String out = HeapLimitedJvm.run(dir, CallbackFailureChild.class, url.toString());

    assertTrue(out.contains("done"), out);
    assertFalse(out.contains("onFailure"), "an IOException from onResponse is not delivered again:\n" + out);
    assertEquals(1, server.effectCount(server.recordedRequests().get(0).keyHeader().orElseThrow()));
    List<String> warns = out.lines().filter(l -> l.contains("WARN") && l.contains("Callback failure for")).toList();
    assertEquals(1, warns.size(), "one WARN line for the callback's failure:\n" + out);
    String warn = warns.get(0);
    assertTrue(warn.contains("POST " + HttpUrl.get(url).redact()), warn);
    assertTrue(out.contains(CallbackFailureChild.MESSAGE), "the exception is logged with it:\n" + out);
    assertFalse(out.contains("c-secret-42"), "the query is not logged:\n" + out);
    assertFalse(out.contains("child-secret-token"), "no header is logged:\n" + out);
  }
}
