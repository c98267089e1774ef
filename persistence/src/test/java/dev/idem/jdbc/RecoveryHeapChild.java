package dev.idem.jdbc;

import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Path;
import java.time.Instant;

/**
 * The child JVMs of {@link RecoveryHeapTest}. {@code begin DIR N}: begins N inline operations
 * with 500 KB bodies on the embedded journal in DIR, never claimed, then halts without closing it
 * (a crash: the next open settles them as maybe sent). {@code open DIR}: opens the journal, prints
 * {@code opened} and exits 0; prints the OutOfMemoryError and exits 3 if the heap runs out.
 */
public final class RecoveryHeapChild {
  private RecoveryHeapChild() {
  }

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[1]);
    if (args[0].equals("begin")) {
      Ops ops = new Ops(3);
      String pad = "x".repeat(500_000);
      JdbcJournal j = JdbcJournal.embedded(dir).closeOnShutdown(false).open();
      for (int i = 0; i < Integer.parseInt(args[2]); i++) {
        RequestSnapshot r = Ops.request("{\"n\":" + i + ",\"doc\":\"" + pad + "\"}");
        j.begin(new NewOperation(ops.id("create-order"), null, Fingerprinter.defaults().fingerprint(r), r,
            Instant.now()));
      }
      j.flush();
      System.out.println("begun");
      System.out.flush();
      Runtime.getRuntime().halt(0);
    }
    try (JdbcJournal j = JdbcJournal.embedded(dir).closeOnShutdown(false).open()) {
      System.out.println("opened, " + j.count(dev.idem.core.OperationState.PENDING) + " pending");
    } catch (OutOfMemoryError e) {
      System.out.println("OutOfMemoryError at open: " + e);
      e.printStackTrace(System.out);
      System.out.flush();
      Runtime.getRuntime().halt(3);
    }
    System.out.flush();
    System.exit(0);
  }
}
