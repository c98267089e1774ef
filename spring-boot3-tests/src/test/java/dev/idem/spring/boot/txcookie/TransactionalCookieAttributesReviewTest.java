package dev.idem.spring.boot.txcookie;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.spring.boot.SameHandlerAnswers;
import dev.idem.spring.boot.SameHandlerRoutes;
import dev.idem.spring.boot.TransactionalTomcatTest;
import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletResponse;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.web.bind.annotation.RestController;

/**
 * Review: a transactional handler ({@code @Idempotent(transactional = true)}) is given the starter's
 * {@code BufferedResponse}, whose {@code addCookie} renders {@code Set-Cookie} by hand from name,
 * value, Path, Max-Age, Secure and HttpOnly only. A cookie's {@code Domain} and its Servlet 6
 * attributes ({@code SameSite}, set with {@code Cookie.setAttribute}) are dropped, so the client of
 * the guarded route gets another cookie than the container sends for the same handler unguarded: a
 * host-only cookie instead of one for the parent domain (the session is lost on the sibling hosts),
 * and no {@code SameSite=None} (browsers then apply Lax and drop it on cross-site requests).
 * The lease-mode filter hands {@code addCookie} to the container and is not affected.
 *
 * <p>Deterministic: the same handler body runs guarded (transactional) and unguarded on one Tomcat,
 * and the two {@code Set-Cookie} values are compared.
 */
@SpringBootTest(classes = TransactionalCookieAttributesReviewTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class TransactionalCookieAttributesReviewTest extends TransactionalTomcatTest {
  @SpringBootApplication
  @Import(Sessions.class)
  static class App {}

  @RestController
  static class Sessions extends SameHandlerRoutes {
    Sessions(JdbcTemplate jdbc) {
      super(jdbc);
    }

    @Override
    protected void answer(String kind, HttpServletResponse response) {
      Cookie session = new Cookie("sid", "abc123");
      session.setDomain("example.com");
      session.setPath("/");
      session.setSecure(true);
      session.setHttpOnly(true);
      session.setAttribute("SameSite", "None");
      response.addCookie(session);
      response.setStatus(201);
    }
  }

  @Test
  void theGuardedAnswerCarriesTheSameCookieAsTheUnguardedOne() throws Exception {
    SameHandlerAnswers a = sameHandlerAnswers("cookie");

    assertEquals(201, a.plain().statusCode());
    assertEquals(201, a.guarded().statusCode());
    List<String> expected = a.plain().headers().allValues("Set-Cookie");
    assertEquals(expected, a.guarded().headers().allValues("Set-Cookie"),
        "the transactional route's cookie lost attributes the container sends for the same handler unguarded");
  }
}
