package dev.idem.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.sun.jdi.Bootstrap;
import com.sun.jdi.IncompatibleThreadStateException;
import com.sun.jdi.Location;
import com.sun.jdi.ReferenceType;
import com.sun.jdi.StackFrame;
import com.sun.jdi.ThreadReference;
import com.sun.jdi.VMDisconnectedException;
import com.sun.jdi.VirtualMachine;
import com.sun.jdi.connect.Connector;
import com.sun.jdi.connect.ListeningConnector;
import com.sun.jdi.event.BreakpointEvent;
import com.sun.jdi.event.ClassPrepareEvent;
import com.sun.jdi.event.Event;
import com.sun.jdi.event.EventSet;
import com.sun.jdi.event.ThreadDeathEvent;
import com.sun.jdi.event.VMDeathEvent;
import com.sun.jdi.event.VMDisconnectEvent;
import com.sun.jdi.request.BreakpointRequest;
import com.sun.jdi.request.ClassPrepareRequest;
import com.sun.jdi.request.EventRequest;
import com.sun.jdi.request.ThreadDeathRequest;
import com.sun.jdi.request.VMDeathRequest;
import dev.idem.core.OperationState;
import dev.idem.jdbc.support.Ops;
import dev.idem.storage.EmbeddedFiles;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * SIGTERM while the app's main thread closes the embedded journal itself (a main that closes its
 * resources at the end). A real child JVM ({@link CloseOnMainChild}) under a debugger, so that the
 * signal arrives at the same point of the close every run: when the close is about to remove the
 * open marker, SQLite's last close having checkpointed and removed the {@code -wal} file. The
 * journal's shutdown hook then finds a close already running on another thread.
 */
class CloseDuringExitTest {
  private static final String EMBEDDED_FILES = EmbeddedFiles.class.getName();
  private static final String HOOK = "idem-journal-shutdown-hook";
  private static final String HOOK_CLOSER = "idem-journal-close-at-exit";

  @TempDir
  Path tmp;

  private Path dir() {
    return tmp.resolve("journal");
  }

  /**
   * The hook waits for the main thread's close (within its bound) instead of returning at once and
   * letting the JVM halt in the middle of it: the close finishes, and the next open finds a clean
   * close with everything the callers were told.
   */
  @Test
  void theHookWaitsForACloseRunningOnAnotherThread() throws Exception {
    try (Debugged child = Debugged.start(tmp, dir(), 30_000)) {
      ThreadReference main = child.stopMainBeforeMarkClosed();
      child.process.destroy(); // SIGTERM
      ThreadDeathRequest deaths = child.vm.eventRequestManager().createThreadDeathRequest();
      deaths.setSuspendPolicy(EventRequest.SUSPEND_NONE);
      deaths.enable();
      // Resume the main thread only once the hook is seen waiting for its close; a hook that ends
      // first has left the close to be cut by the JVM's halt, which is what this test is about.
      boolean hookWaited = false;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (!hookWaited && System.nanoTime() < deadline) {
        try {
          EventSet events = child.vm.eventQueue().remove(5);
          if (events != null) {
            for (Event e : events) {
              if (e instanceof ThreadDeathEvent d && HOOK.equals(d.thread().name())) {
                fail("the journal's shutdown hook ended while the main thread's close was still running\n"
                    + child.output());
              }
              if (e instanceof VMDeathEvent || e instanceof VMDisconnectEvent) {
                fail("the child's hooks ended while the main thread's close was still running\n" + child.output());
              }
            }
            events.resume();
          }
          hookWaited = waitsInTheJournal(child.vm, HOOK_CLOSER);
        } catch (VMDisconnectedException e) {
          child.process.waitFor(60, TimeUnit.SECONDS);
          throw new AssertionError("the child exited (" + child.process.exitValue() + ") while the main thread's"
              + " close was still running\n" + child.output(), e);
        }
      }
      assertTrue(hookWaited, "the hook's close was seen waiting\n" + child.output());
      main.resume();
      child.finish();
    }
    assertFalse(Files.exists(dir().resolve("idem-journal.open")), "the main thread's close ran to its end");
    assertEverythingKept();
  }

  /**
   * However the close is cut (here: the hook's bound runs out while the main thread's close is
   * held, and the JVM halts), a journal SQLite checkpointed and whose {@code -wal} file it removed
   * is reopened with everything it held, not refused as one whose {@code -wal} file was lost.
   */
  @Test
  void aCloseCutAfterSqliteRemovedTheWalFileIsReopenedNotRefused() throws Exception {
    try (Debugged child = Debugged.start(tmp, dir(), 300)) {
      child.stopMainBeforeMarkClosed();
      assertFalse(Files.exists(dir().resolve(EmbeddedFiles.WAL_FILE)), "SQLite's last close removed the -wal file");
      child.process.destroy(); // SIGTERM; the main thread stays stopped where it is
      child.finish();
    }
    assertTrue(Files.exists(dir().resolve("idem-journal.open")), "the close was not marked clean");
    assertEverythingKept();
  }

  private void assertEverythingKept() throws Exception {
    Ops ops = new Ops(CloseOnMainChild.SEED);
    try (JdbcJournal reopened = JdbcJournal.openEmbedded(dir())) {
      for (int i = 0; i < CloseOnMainChild.OPERATIONS; i++) {
        assertEquals(OperationState.SUCCEEDED, reopened.find(ops.newOp("{}").id()).orElseThrow().state());
      }
    }
  }

  /** Whether the thread named {@code name} waits (parked, or in Object.wait) inside JdbcJournal. */
  private static boolean waitsInTheJournal(VirtualMachine vm, String name) {
    for (ThreadReference t : vm.allThreads()) {
      if (!t.name().equals(name) || t.status() != ThreadReference.THREAD_STATUS_WAIT) {
        continue;
      }
      t.suspend();
      try {
        for (StackFrame f : t.frames()) {
          if (f.location().declaringType().name().equals(JdbcJournal.class.getName())) {
            return true;
          }
        }
      } catch (IncompatibleThreadStateException e) {
        return false;
      } finally {
        t.resume();
      }
    }
    return false;
  }

  /** The child JVM, started suspended under this test's debugger (JDWP over an ephemeral local port). */
  private static final class Debugged implements AutoCloseable {
    final Process process;
    final VirtualMachine vm;
    private final StringBuffer output = new StringBuffer();
    /** Counted down when the reader has taken the child's "CLOSING" line. */
    private final CountDownLatch closing = new CountDownLatch(1);

    private Debugged(Process process, VirtualMachine vm) {
      this.process = process;
      this.vm = vm;
      Thread reader = new Thread(() -> {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
            StandardCharsets.UTF_8))) {
          for (String line = in.readLine(); line != null; line = in.readLine()) {
            output.append(line).append('\n');
            if (line.equals("CLOSING")) {
              closing.countDown();
            }
          }
        } catch (java.io.IOException e) {
          output.append("[reading failed: ").append(e).append("]\n");
        }
      }, "debugged-child-output");
      reader.setDaemon(true);
      reader.start();
    }

    static Debugged start(Path workDir, Path journal, long hookTimeoutMillis) throws Exception {
      ListeningConnector listen = Bootstrap.virtualMachineManager().listeningConnectors().stream()
          .filter(c -> c.name().equals("com.sun.jdi.SocketListen")).findFirst().orElseThrow();
      Map<String, Connector.Argument> args = listen.defaultArguments();
      args.get("port").setValue("0");
      args.get("localAddress").setValue("127.0.0.1");
      args.get("timeout").setValue("60000");
      String address = listen.startListening(args);
      try {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, "-XX:TieredStopAtLevel=1",
            "-agentlib:jdwp=transport=dt_socket,server=n,suspend=y,address=" + address,
            "-cp", System.getProperty("java.class.path"), "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
            CloseOnMainChild.class.getName(), journal.toString(), Long.toString(hookTimeoutMillis)));
        Process p = new ProcessBuilder(command).directory(workDir.toFile()).redirectErrorStream(true).start();
        VirtualMachine vm;
        try {
          vm = listen.accept(args);
        } catch (Exception e) {
          p.destroyForcibly();
          throw e;
        }
        return new Debugged(p, vm);
      } finally {
        listen.stopListening(args);
      }
    }

    /**
     * Lets the child run until its main thread's close enters {@code EmbeddedFiles.markClosed}, and
     * leaves that thread stopped there (the rest of the JVM runs on).
     */
    ThreadReference stopMainBeforeMarkClosed() throws Exception {
      VMDeathRequest death = vm.eventRequestManager().createVMDeathRequest();
      death.setSuspendPolicy(EventRequest.SUSPEND_ALL);
      death.enable();
      ClassPrepareRequest prepare = vm.eventRequestManager().createClassPrepareRequest();
      prepare.addClassFilter(EMBEDDED_FILES);
      prepare.setSuspendPolicy(EventRequest.SUSPEND_ALL);
      prepare.enable();
      vm.resume();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (System.nanoTime() < deadline) {
        EventSet events = vm.eventQueue().remove(1000);
        if (events == null) {
          continue;
        }
        for (Event e : events) {
          if (e instanceof ClassPrepareEvent cp) {
            ReferenceType type = cp.referenceType();
            Location at = type.methodsByName("markClosed").get(0).location();
            BreakpointRequest bp = vm.eventRequestManager().createBreakpointRequest(at);
            bp.setSuspendPolicy(EventRequest.SUSPEND_EVENT_THREAD);
            bp.enable();
          } else if (e instanceof BreakpointEvent b) {
            assertEquals("main", b.thread().name(), output());
            // The child printed it before its close; the breakpoint's event comes over the debugger's
            // socket, the line over a pipe our reader drains: on a loaded machine the event wins.
            assertTrue(closing.await(30, TimeUnit.SECONDS), output());
            return b.thread();
          } else if (e instanceof VMDisconnectEvent) {
            fail("the child exited before its close marked it clean\n" + output());
          }
        }
        events.resume();
      }
      throw new IllegalStateException("the child's close never reached markClosed\n" + output());
    }

    /** Lets the child's other threads run until the JVM is gone. */
    void finish() throws InterruptedException {
      try {
        while (true) {
          EventSet events = vm.eventQueue().remove(1000);
          if (events == null) {
            if (!process.isAlive()) {
              break;
            }
            continue;
          }
          boolean gone = false;
          for (Event e : events) {
            gone |= e instanceof VMDisconnectEvent;
            if (e instanceof VMDeathEvent) {
              // The hooks are done; the JVM halts next. Under a debugger it would first resume every
              // thread, and a thread this test stopped would run on: halted here instead.
              process.destroyForcibly();
              gone = true;
            }
          }
          if (gone) {
            break;
          }
          if (events.suspendPolicy() != EventRequest.SUSPEND_NONE) {
            events.resume();
          }
        }
      } catch (VMDisconnectedException gone) {
        // the JVM exited
      }
      assertTrue(process.waitFor(60, TimeUnit.SECONDS), "the child exited\n" + output());
    }

    String output() {
      return output.toString();
    }

    @Override
    public void close() {
      process.destroyForcibly();
    }
  }
}
