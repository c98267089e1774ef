package dev.idem.spring.boot.txlocale;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.spring.boot.SameHandlerAnswers;
import dev.idem.spring.boot.SameHandlerRoutes;
import dev.idem.spring.boot.TransactionalTomcatTest;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Locale;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.Ordered;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.web.bind.annotation.RestController;

/**
 * Found reviewing 51ebc9fb; fails on its parent too. A filter ahead of the guard set a bare content type on the container's response
 * ({@code text/plain}); the transactional handler sets a locale Boot's Tomcat maps to UTF-8
 * ({@code fr}) and writes through the writer without a content type of its own. Unguarded, Tomcat
 * names the locale's charset on the filter's type: {@code text/plain;charset=UTF-8}. Guarded, the
 * probe reads fr's UTF-8 and the handler's body is held in UTF-8, but the held answer has no
 * Content-Type and the probe puts the container's response back without the locale's charset, so the
 * answer goes out as {@code text/plain} with no charset: a client decodes the UTF-8 body with its
 * default (ISO-8859-1 per HTTP/1.1's old rule, or a browser's guess), first and on every replay.
 */
@SpringBootTest(classes = RvRlocOuterContentTypeLocaleCharsetTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class RvRlocOuterContentTypeLocaleCharsetTest extends TransactionalTomcatTest {
  @SpringBootApplication
  @Import(Notes.class)
  static class App {
    @Bean
    FilterRegistrationBean<Filter> outerType() {
      FilterRegistrationBean<Filter> r = new FilterRegistrationBean<>((req, res, chain) -> {
        res.setContentType("text/plain");
        chain.doFilter(req, res);
      });
      r.setOrder(Ordered.HIGHEST_PRECEDENCE + 10);
      return r;
    }
  }

  @RestController
  static class Notes extends SameHandlerRoutes {
    Notes(JdbcTemplate jdbc) {
      super(jdbc);
    }

    @Override
    protected void answer(String kind, HttpServletResponse response) throws IOException {
      response.setStatus(201);
      response.setLocale(Locale.FRANCE);
      response.getWriter().write("gr\u00fc\u00df");
    }
  }

  @Test
  void theLocalesCharsetIsNamedOnTheFiltersTypeAsUnguarded() throws Exception {
    SameHandlerAnswers a = sameHandlerAnswers("outertype");

    assertEquals(Optional.of("text/plain;charset=UTF-8"), a.unguarded("Content-Type"), "the container's own answer");
    a.assertReplayed();
    a.assertAsUnguarded("Content-Type");
    a.assertBodiesAsUnguarded();
  }
}
