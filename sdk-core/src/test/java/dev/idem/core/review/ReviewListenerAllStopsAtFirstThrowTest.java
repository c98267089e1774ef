package dev.idem.core.review;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Operation;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.event.IdemEvent;
import dev.idem.core.event.IdemListener;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Harness.Driver;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@code IdemListener.all(List.of(logging, metrics))} was a forEach: when the first listener threw,
 * the ones after it heard nothing of that event, so the metrics of a call went missing because a
 * log appender broke (the Spring starter combines every IdemListener bean this way). Every listener
 * must be told; what one throws still reaches the executor's guard, which logs it, and changes
 * nothing of the call.
 */
class ReviewListenerAllStopsAtFirstThrowTest {

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aListenerThatThrowsFirstLeavesTheListenersAfterItHearingEveryEvent(Driver d) throws Exception {
    List<String> heardByBroken = new CopyOnWriteArrayList<>();
    List<String> heardByMetrics = new CopyOnWriteArrayList<>();
    IdemListener broken = e -> {
      heardByBroken.add(e.getClass().getSimpleName());
      throw new IllegalStateException("a broken log appender");
    };
    IdemListener metrics = e -> heardByMetrics.add(e.getClass().getSimpleName());
    Harness h = new Harness(Harness.POLICY, b -> b.listener(IdemListener.all(List.of(broken, metrics))));
    Operation op = Operation.builder("create-order", Requests.order("{\"amount\":100}")).build();
    ScriptedTransport t = h.transport(op).then(status(503), status(201));

    Outcome out = d.run(h, op, t);

    assertEquals(201, out.response().status());
    assertEquals(2, t.count());
    assertTrue(t.sent().stream().allMatch(s -> s.key().equals(op.key())), "one key on every attempt");
    assertEquals(OperationState.SUCCEEDED, h.state(op));
    assertTrue(heardByBroken.contains("Succeeded"), heardByBroken.toString());
    assertEquals(heardByBroken, heardByMetrics, "the listener after the one that threw missed events");
  }

  /** An Error too waits until every listener was told, and no failure is lost on the way. */
  @Test
  void allTellsEveryListenerThenThrowsTheFirstErrorWithTheOtherFailuresSuppressed() {
    IllegalStateException broken = new IllegalStateException("a broken log appender");
    NoSuchMethodError linkage = new NoSuchMethodError("a metrics binder built against another Micrometer");
    List<IdemEvent> last = new CopyOnWriteArrayList<>();
    IdemListener listener = IdemListener.all(List.of(e -> {
      throw broken;
    }, e -> {
      throw linkage;
    }, e -> {
      throw broken;
    }, last::add));
    IdemEvent event = new IdemEvent.BreakerStateChanged("api.example", "CLOSED", "OPEN");

    NoSuchMethodError thrown = assertThrows(NoSuchMethodError.class, () -> listener.onEvent(event));
    assertEquals(List.of(event), last, "the last listener was not told");
    assertEquals(linkage, thrown);
    assertEquals(List.of(broken), List.of(thrown.getSuppressed()));
  }
}
