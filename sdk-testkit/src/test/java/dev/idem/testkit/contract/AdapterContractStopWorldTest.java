package dev.idem.testkit.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What {@link AdapterContract#stopWorld} closes when closing one thing fails. */
class AdapterContractStopWorldTest {
  @Test
  void everythingIsClosedAndTheServerStopsEvenIfClosingSomethingThrows() throws Exception {
    AdapterContract contract = new AdapterContract() {
      @Override
      protected AdapterDriver driver() {
        throw new UnsupportedOperationException("no scenario runs here");
      }
    };
    contract.startWorld();
    URI url = contract.server.url("/");
    List<String> closed = new ArrayList<>();
    IllegalStateException first = new IllegalStateException("the outbox would not stop");
    IllegalStateException second = new IllegalStateException("nor would this");
    contract.closeLater(() -> {
      throw first;
    });
    contract.closeLater(() -> closed.add("after the failure"));
    contract.closeLater(() -> {
      throw second;
    });

    Exception thrown = assertThrows(Exception.class, contract::stopWorld);

    assertSame(first, thrown, "the first failure is reported");
    assertEquals(List.of(second), List.of(thrown.getSuppressed()), "later ones ride along, suppressed");
    assertEquals(List.of("after the failure"), closed, "what came after a failure is closed all the same");
    assertThrows(IOException.class, () -> {
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress(url.getHost(), url.getPort()), 2_000);
      }
    }, "the server was closed: no port left open for the next test class");
  }
}
