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
 * The README's OkHttp quickstart in a {@code main} that closes nothing, ending by returning,
 * {@code System.exit(0)} or SIGTERM; then two restarts that run the README's resume against the live
 * target. What the caller was told must hold after each restart (issue 24, "A call reported FAILED
 * was later sent" and "Outcomes the caller saw are forgotten").
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OkHttpExitTest {
  private ExitScenario.Runs runs;

  @BeforeAll
  void startEveryScenario(@TempDir Path tmp) {
    runs = ExitScenario.startAll(tmp, OkHttpQuickstartApp.class);
  }

  @AfterAll
  void stop() {
    runs.close();
  }

  @ParameterizedTest
  @EnumSource(MainEnding.class)
  void anOrderToldFailedWhileTheTargetWasDownNeverTakesEffect(MainEnding ending) throws Exception {
    Report r = runs.report(ending, Target.DOWN);
    r.assertEveryCallerTold("FAILED");
    assertAll(r::assertNoneToldFailedTookEffect, r::assertNoConfirmationRepeated);
  }

  @ParameterizedTest
  @EnumSource(MainEnding.class)
  void anOrderToldSucceededIsNeitherSentNorConfirmedAgain(MainEnding ending) throws Exception {
    Report r = runs.report(ending, Target.UP);
    r.assertEveryCallerTold("SUCCEEDED");
    assertAll(r::assertNoneToldSucceededResent, r::assertNoConfirmationRepeated);
  }
}
