package dev.idem.testkit.contract;

import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.BeginResult;
import dev.idem.core.spi.Journal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Review: {@link JournalContract} is what the Journal SPI's Javadoc names as the check of an
 * implementation ("The test kit's JournalContract checks an implementation against this
 * contract"), yet none of its tests calls {@link Journal#beginAndClaim} (the one synchronous write
 * of every inline call, overridden by both InMemoryJournal and JdbcJournal, as a third-party
 * journal would for the same reason) or {@link Journal#recordOutcomesDelivered} (overridden by
 * JdbcJournal). A journal that gets either wrong passes the whole contract.
 *
 * <p>Each test here runs every contract test against a journal with one such defect and expects
 * at least one of them to fail.
 */
class JournalContractMutantReviewTest {
  /** The contract over a journal that forwards to an InMemoryJournal but for one method. */
  private static final class Mutant extends JournalContract {
    final InMemoryJournal delegate = new InMemoryJournal();
    final Journal journal;

    Mutant(String method, Mutation mutation) {
      journal = (Journal) Proxy.newProxyInstance(Journal.class.getClassLoader(), new Class<?>[] {Journal.class},
          (proxy, m, args) -> {
            if (m.getName().equals(method)) {
              return mutation.apply(delegate, args);
            }
            try {
              return m.invoke(delegate, args);
            } catch (InvocationTargetException e) {
              throw e.getCause();
            }
          });
    }

    @Override
    protected Journal journal() {
      return journal;
    }
  }

  @FunctionalInterface
  private interface Mutation {
    Object apply(InMemoryJournal delegate, Object[] args) throws Exception;
  }

  @Test
  void aBeginAndClaimThatHandsOutALeaseWithoutWritingTheClaimFailsTheContract() throws Exception {
    // Returns the lease and the IN_FLIGHT record a claim would give, but stores only the begin: the
    // operation stays PENDING and claimable, so a second instance resumes and sends it while the
    // first is still sending it.
    List<String> failed = runContract("beginAndClaim", (delegate, args) -> {
      NewOperation op = (NewOperation) args[0];
      String owner = (String) args[1];
      java.time.Duration leaseFor = (java.time.Duration) args[2];
      BeginResult begun = delegate.begin(op);
      if (!begun.created()) {
        return begun;
      }
      Lease lease = new Lease(owner, 1, op.createdAt().plus(leaseFor), false);
      return new BeginResult(begun.record().with(OperationState.IN_FLIGHT, owner, 1, lease.expiresAt(), null,
          op.createdAt(), null, null), true, lease);
    });
    assertFalse(failed.isEmpty(), "a journal whose beginAndClaim writes no claim passes every JournalContract test");
  }

  @Test
  void aBatchOfDeliveriesThatRecordsNothingFailsTheContract() throws Exception {
    // Says the batch was recorded and records nothing: every outcome stays owed and is handed to
    // its handler again after each restart.
    List<String> failed = runContract("recordOutcomesDelivered", (delegate, args) -> ((List<?>) args[0]).size());
    assertFalse(failed.isEmpty(),
        "a journal whose recordOutcomesDelivered records nothing passes every JournalContract test");
  }

  @Test
  void aCountThatIgnoresTheStateFailsTheContract() throws Exception {
    // The SPI asks journals to answer count with one query, and JdbcJournal does; one whose query
    // lost its WHERE counts every operation. The pending-queue gauge and the health indicator read
    // it, and no contract test called it.
    List<String> failed = runContract("count", (delegate, args) -> {
      long all = 0;
      for (OperationState state : OperationState.values()) {
        all += delegate.count(state);
      }
      return all;
    });
    assertFalse(failed.isEmpty(), "a journal whose count ignores the state passes every JournalContract test");
  }

  @Test
  void anOldestCreatedAtThatGivesTheNewestFailsTheContract() throws Exception {
    // MAX for MIN: the oldest-pending-age gauge then reads the youngest operation's age, and a
    // stuck backlog never shows.
    List<String> failed = runContract("oldestCreatedAt", (delegate, args) -> {
      java.time.Instant newest = null;
      for (OperationRecord r : delegate.findByState((OperationState) args[0], null, 10_000)) {
        newest = newest == null || r.createdAt().isAfter(newest) ? r.createdAt() : newest;
      }
      return java.util.Optional.ofNullable(newest);
    });
    assertFalse(failed.isEmpty(),
        "a journal whose oldestCreatedAt gives the newest operation passes every JournalContract test");
  }

  @Test
  void aClaimThatIgnoresTheLeaseAskedForFailsTheContract() throws Exception {
    // A lease of its own choosing (30 s, which is also the contract's LEASE, so every claim looked
    // right): an executor configured for longer leases is taken over while it is still sending.
    List<String> failed = runContract("claim", (delegate, args) -> delegate.claim((OperationId) args[0],
        (String) args[1], (Instant) args[2], Duration.ofSeconds(30)));
    assertFalse(failed.isEmpty(), "a journal whose claim ignores leaseFor passes every JournalContract test");
  }

  @Test
  void aPurgeThatAlsoDeletesAtTheCutoffFailsTheContract() throws Exception {
    // The SPI says "updated strictly before": a purge by <= instead of < deletes one instant too many.
    List<String> failed = runContract("purge", (delegate, args) -> delegate.purge(((Instant) args[0]).plusNanos(1)));
    assertFalse(failed.isEmpty(), "a journal whose purge deletes at the cutoff passes every JournalContract test");
  }

  /** Runs each contract test on a fresh mutant; the names of those that failed. */
  private static List<String> runContract(String method, Mutation mutation) throws Exception {
    List<String> failed = new ArrayList<>();
    int run = 0;
    for (Method test : JournalContract.class.getDeclaredMethods()) {
      if (!test.isAnnotationPresent(Test.class)) {
        continue;
      }
      run++;
      Mutant contract = new Mutant(method, mutation);
      test.setAccessible(true);
      try {
        test.invoke(contract);
      } catch (InvocationTargetException e) {
        failed.add(test.getName() + ": " + e.getCause());
      } finally {
        contract.delegate.close();
      }
    }
    if (run == 0) {
      throw new AssertionError("no contract tests found");
    }
    return failed;
  }
}
