package dev.idem.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Regression test for a defect found by review, described as it was; fixed: names the database cannot be asked about are left out of the query (no operation has one).
 *
 * <p>Review of 4cc7ea00 ("a poll reads the due operations of its registered names only"), SQLite.
 *
 * <p>The SPI says {@code findDue(now, owner, names, after, limit)} returns "the operations whose
 * name is one of {@code names} only", and its default compares names with {@code Set.contains}.
 * JdbcJournal binds them into {@code operation IN (...)} without the check every other call that
 * takes caller text makes ({@code unaskableAt}): sqlite-jdbc (and pgjdbc) bind an unpaired UTF-16
 * surrogate as '?', so name "t\uD800" is asked as "t?", and the journal hands back operation
 * "t?"'s due records. JdbcJournal's own Javadoc calls exactly this a defect for find, claim and
 * transitions ("reached tenant "t?"'s operation"); begin refuses such a name, so the right answer
 * is: no operation. The bundled OutboxDispatcher re-checks names, so it does not deliver them; any
 * other caller of the SPI (a custom deliverer, a ForwardingJournal that trusts the filter) gets
 * another name's operations.
 */
class SqliteFindDueOfUnaskableNameTest {
  @TempDir
  Path dir;

  @Test
  void aNameWithAnUnpairedSurrogateMatchesNoOperation() throws Exception {
    try (JdbcJournal journal = JdbcJournal.openEmbedded(dir)) {
      journal.begin(dev.idem.jdbc.support.Ops.op(new OperationId("default", "t?", IdempotencyKey.of("k-1")), "{}"));
      Instant now = Instant.now().plusSeconds(60);

      List<OperationRecord> due = journal.findDue(now, "pod-a", Set.of("t\uD800"), null, 10);

      assertEquals(List.of(), due.stream().map(r -> r.id().operation()).toList(),
          "findDue of name \"t\\uD800\" (which begin refuses, so no operation has it) returned operation \"t?\"'s"
              + " records: the name was bound unchecked and the driver sent it as \"t?\"");
    }
  }
}
