package dev.idem.core.event;

import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The Spring starter combines every IdemListener bean with {@code all}; an app with none got a
 * listener that was not {@link IdemListener#none()}, so its executor built every event for nobody
 * (the executor skips building events only for {@code none()}).
 */
class IdemListenerAllTest {

  @Test
  void allOfNoListenerIsNone() {
    assertSame(IdemListener.none(), IdemListener.all(List.of()));
  }

  @Test
  void allOfOneListenerIsThatListener() {
    IdemListener only = e -> { };
    assertSame(only, IdemListener.all(List.of(only)));
  }
}
