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
 * A transactional handler's cookies and {@code Set-Cookie} headers go out after the commit in the
 * order it made them and as the container renders them unguarded (a cookie changed after
 * {@code addCookie} is sent as it was added), once: the replay carries none, since Set-Cookie is a
 * secret the guard never stores.
 */
@SpringBootTest(classes = TransactionalCookieReplayTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class TransactionalCookieReplayTest extends TransactionalTomcatTest {
  @SpringBootApplication
  @Import(Logins.class)
  static class App {}

  @RestController
  static class Logins extends SameHandlerRoutes {
    Logins(JdbcTemplate jdbc) {
      super(jdbc);
    }

    @Override
    protected void answer(String kind, HttpServletResponse response) {
      response.addHeader("Set-Cookie", "first=1; Path=/");
      Cookie session = new Cookie("sid", "abc123");
      session.setAttribute("SameSite", "Lax");
      session.setSecure(true);
      response.addCookie(session);
      session.setValue("changed-after-add");
      response.addHeader("Set-Cookie", "last=3");
      response.setStatus(201);
    }
  }

  @Test
  void theCookiesGoOutOnceAsTheContainerRendersThem() throws Exception {
    SameHandlerAnswers a = sameHandlerAnswers("login");

    List<String> expected = a.plain().headers().allValues("Set-Cookie");
    assertEquals(3, expected.size(), "the container's own answer: " + expected);
    assertEquals(expected, a.guarded().headers().allValues("Set-Cookie"), "the first answer");
    a.assertReplayed();
    assertEquals(201, a.replay().statusCode());
    assertEquals(List.of(), a.replay().headers().allValues("Set-Cookie"), "the replay");
  }
}
