package dev.idem.core.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.InMemoryJournal;
import dev.idem.core.JournalException;
import dev.idem.core.Operation;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.support.Requests;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The default {@link Journal#claimAll} gives back the claims it made when a later claim fails. A
 * journal that throws one exception instance for both (a driver wrapper that rethrows the failure
 * it kept, a broken connection's cached exception) made the give-back's
 * {@code e.addSuppressed(e)} throw "Self-suppression not permitted": the caller got an
 * IllegalArgumentException instead of the journal's failure, and the claims after the first
 * failed give-back were never tried.
 */
class ClaimAllSameFailureTwiceTest {
  private static final Instant T0 = Instant.parse("2026-12-07T00:00:00Z");

  @Test
  void theJournalsOwnFailureComesOutAndEveryClaimIsGivenBackOrTried() throws Exception {
    InMemoryJournal memory = new InMemoryJournal();
    List<OperationRecord> asRead = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      Operation op = Operation.builder("create-order", Requests.order("{\"n\":" + i + "}")).build();
      asRead.add(memory.begin(new NewOperation(op.id(), null, Fingerprinter.defaults().fingerprint(op.request()),
          op.request(), T0)).record());
    }
    JournalException broken = new JournalException("connection broken", null);
    AtomicInteger claims = new AtomicInteger();
    AtomicInteger givenBack = new AtomicInteger();
    // Journal's own claimAll (a proxy runs the interface's default), over claims that fail at the
    // third and give-backs that fail, both with the one instance.
    InvocationHandler handler = (proxy, method, args) -> {
      switch (method.getName()) {
        case "claimAll":
        case "claimIfUnchanged": // the default's own read and claim, through this proxy
          return InvocationHandler.invokeDefault(proxy, method, args);
        case "claim":
          if (claims.incrementAndGet() == 3) {
            throw broken;
          }
          break;
        case "transition":
          givenBack.incrementAndGet();
          throw broken;
        default:
          break;
      }
      try {
        return method.invoke(memory, args);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
    };
    Journal journal = (Journal) Proxy.newProxyInstance(Journal.class.getClassLoader(), new Class<?>[] {Journal.class},
        handler);

    JournalException thrown = assertThrows(JournalException.class,
        () -> journal.claimAll(asRead, "only", T0, Duration.ofMinutes(1)));

    assertSame(broken, thrown, "the journal's own failure, not one the give-back made");
    assertEquals(2, givenBack.get(), "both claims made before the failure are given back, or tried");
    assertEquals(OperationState.PENDING, memory.find(asRead.get(2).id()).orElseThrow().state());
  }
}
