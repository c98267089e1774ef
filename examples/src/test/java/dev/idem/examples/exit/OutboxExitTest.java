package dev.idem.examples.exit;

import static org.junit.jupiter.api.Assertions.assertAll;

import dev.idem.examples.exit.ExitScenario.Report;
import dev.idem.examples.exit.ExitScenario.Target;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The README's outbox quickstart (OkHttp) in a {@code main} that closes nothing, ending by
 * returning, {@code System.exit(0)} or SIGTERM; then two restarts whose dispatcher delivers against
 * the live target. While the target is down the orders stay PENDING, and are delivered once each
 * when it is up; an order whose awaiter was told SUCCEEDED is neither sent nor confirmed again
 * (issue 24, "Offline, the outbox gives up" and "Outcomes the caller saw are forgotten").
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OutboxExitTest {
  private ExitScenario.Runs runs;

  @BeforeAll
  void startEveryScenario(@TempDir Path tmp) {
    runs = ExitScenario.startAll(tmp, OutboxQuickstartApp.class);
  }

  @AfterAll
  void stop() {
    runs.close();
  }

  @ParameterizedTest
  @EnumSource(MainEnding.class)
  void ordersEnqueuedWhileTheTargetIsDownStayPendingAndAreDeliveredOnceWhenItIsUp(MainEnding ending)
      throws Exception {
    Report r = runs.report(ending, Target.DOWN);
    assertAll(r::assertEveryOrderLeftPending, r::assertNoneToldFailedTookEffect, r::assertEveryOrderDeliveredOnce,
        r::assertNoConfirmationRepeated);
  }

  @ParameterizedTest
  @EnumSource(MainEnding.class)
  void anOrderToldSucceededIsNeitherSentNorConfirmedAgain(MainEnding ending) throws Exception {
    Report r = runs.report(ending, Target.UP);
    r.assertEveryCallerTold("SUCCEEDED");
    assertAll(r::assertNoneToldSucceededResent, r::assertNoConfirmationRepeated);
  }
}
