package dev.idem.examples.flavours;

import dev.idem.core.IdempotentExecutor;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.okhttp.IdemOkHttp;
import dev.idem.okhttp.IdempotentOperation;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/**
 * The app that {@link FlavourMatrixTest} kills with SIGKILL in the middle of attempt 1: it opens an
 * embedded journal, then sends one operation per argument through OkHttp with Idem's interceptor,
 * all at once, each on its own thread, and waits for answers the servers hold back until the parent
 * has killed it. One child serves every flavour, so the matrix costs one JVM start, not seven.
 *
 * <p>Arguments: the journal directory, then {@code operation-name=url} pairs. Prints
 * {@code SENDING} once every request has been handed to OkHttp.
 */
public final class FlavourKillChild {
  private FlavourKillChild() {
  }

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    try (JdbcJournal journal = JdbcJournal.openEmbedded(dir)) {
      // Idem's defaults, as the app would run them; the answers never come before the kill anyway.
      IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).build();
      OkHttpClient client = FlavourMatrixTest.client(IdemOkHttp.builder(executor).build());
      List<Thread> senders = new ArrayList<>();
      for (int i = 1; i < args.length; i++) {
        String[] pair = args[i].split("=", 2);
        Request request = FlavourMatrixTest.request(pair[1], IdempotentOperation.of(pair[0]), FlavourMatrixTest.BODY);
        Thread t = new Thread(() -> {
          try (Response r = client.newCall(request).execute()) {
            System.out.println("ANSWERED " + pair[0] + " " + r.code()); // the parent fails if it sees this
          } catch (IOException e) {
            System.out.println("FAILED " + pair[0] + " " + e);
          }
        }, "sender-" + pair[0]);
        t.start();
        senders.add(t);
      }
      System.out.println("SENDING");
      System.out.flush();
      for (Thread t : senders) {
        t.join();
      }
      System.out.println("FINISHED without being killed");
    }
  }
}
