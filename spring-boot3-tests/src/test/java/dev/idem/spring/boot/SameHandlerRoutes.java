package dev.idem.spring.boot;

import dev.idem.spring.server.Idempotent;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;

/**
 * One handler body behind two routes of a test app, so that the container's own answer (the
 * baseline) and the transactional guard's can be compared: {@code POST /tx/{kind}}, guarded in
 * transactional mode, first writes a row for {@code kind} to {@code orders} (the effect that commits
 * or rolls back with the claim), and {@code POST /plain/{kind}}, unguarded, only answers. A test's
 * {@code @RestController} extends it with {@link #answer}.
 *
 * <p>Not a component itself: {@code TestApp} scans this package, and must not get these routes.
 */
public abstract class SameHandlerRoutes {
  /** The guarded route's path, up to the kind. */
  public static final String GUARDED = "/tx/";
  /** The unguarded route's path, up to the kind. */
  public static final String PLAIN = "/plain/";

  private final JdbcTemplate jdbc;

  protected SameHandlerRoutes(JdbcTemplate jdbc) {
    this.jdbc = jdbc;
  }

  @PostMapping(GUARDED + "{kind}")
  @Idempotent(transactional = true)
  public void guarded(@PathVariable String kind, HttpServletResponse response) throws IOException {
    jdbc.update("INSERT INTO orders(item) VALUES (?)", kind);
    answer(kind, response);
  }

  @PostMapping(PLAIN + "{kind}")
  public void plain(@PathVariable String kind, HttpServletResponse response) throws IOException {
    answer(kind, response);
  }

  /** The handler body both routes run: answers {@code kind} on {@code response}. */
  protected abstract void answer(String kind, HttpServletResponse response) throws IOException;
}
