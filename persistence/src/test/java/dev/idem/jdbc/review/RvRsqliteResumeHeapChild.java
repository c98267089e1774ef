package dev.idem.jdbc.review;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.spi.Transport;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The child JVM of {@link RvRsqliteResumeHeapFollowsBodiesTest}: opens the embedded journal in
 * {@code args[0]}, resumes every pending operation with a server that answers 201, prints
 * {@code sent N} and exits 0; prints the OutOfMemoryError and exits 3 if the heap runs out.
 */
public final class RvRsqliteResumeHeapChild {
  private RvRsqliteResumeHeapChild() {
  }

  public static void main(String[] args) throws Exception {
    AtomicInteger sent = new AtomicInteger();
    Transport server = (request, key) -> {
      sent.incrementAndGet();
      return Ops.ok("{\"id\":1}");
    };
    try (JdbcJournal journal = JdbcJournal.embedded(Path.of(args[0])).closeOnShutdown(false).open()) {
      IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).owner("child").build();
      executor.resumePending(Map.of("create-order", ResumeHandler.of(server, o -> { }, f -> { })));
    } catch (OutOfMemoryError e) {
      System.out.println("OutOfMemoryError after " + sent.get() + " sends: " + e);
      e.printStackTrace(System.out);
      System.out.flush();
      Runtime.getRuntime().halt(3);
    }
    System.out.println("sent " + sent.get());
    System.out.flush();
    System.exit(0);
  }
}
