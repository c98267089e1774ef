package dev.idem.jdbc;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.Operation;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Transport;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The child JVM of {@link ResumeKillTest}: enqueues operations on the embedded journal (keys and
 * requests as {@link KillChild}'s), then resumes them with several lanes, which claim them a batch
 * at a time, and halts the JVM once the K-th request has reached the "server" (which appends every
 * key it receives to the server log).
 *
 * <p>Arguments: journal directory, server log file, operation count, resume lanes, K.
 */
public final class ResumeKillChild {
  private ResumeKillChild() {
  }

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    Path serverLog = Path.of(args[1]);
    int count = Integer.parseInt(args[2]);
    int lanes = Integer.parseInt(args[3]);
    int haltAfterSends = Integer.parseInt(args[4]);
    List<IdempotencyKey> keys = KillChild.keys(count);
    JdbcJournal journal = JdbcJournal.openEmbedded(dir);
    IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).owner("child")
        .resumeConcurrency(lanes).build();
    for (int i = 0; i < count; i++) {
      executor.enqueue(Operation.builder("charge", KillChild.request(i)).key(keys.get(i)).build());
    }
    AtomicInteger sends = new AtomicInteger();
    try (FileChannel server = FileChannel.open(serverLog, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.APPEND)) {
      Transport transport = (request, key) -> {
        synchronized (server) {
          server.write(ByteBuffer.wrap((key.value() + "\n").getBytes(StandardCharsets.US_ASCII)));
          if (sends.incrementAndGet() == haltAfterSends) {
            Runtime.getRuntime().halt(HaltingJournal.HALT_CODE);
          }
        }
        return new ResponseSnapshot(201, Map.of("content-type", List.of("application/json")),
            ("{\"ok\":\"" + key.value() + "\"}").getBytes(StandardCharsets.UTF_8));
      };
      executor.resumePending(Map.of("charge", ResumeHandler.of(transport, o -> { }, f -> { })));
    }
    System.out.println("finished without halting");
    System.exit(1);
  }
}
