package dev.idem.spring.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import dev.idem.spring.autoconfigure.IdemAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemWebhooksAutoConfiguration;
import dev.idem.spring.webhooks.WebhookSubscription;
import dev.idem.webhooks.InboxEntry;
import dev.idem.webhooks.InboxState;
import dev.idem.webhooks.PermanentWebhookException;
import dev.idem.webhooks.WebhookActivity;
import dev.idem.webhooks.WebhookInbox;
import dev.idem.webhooks.WebhookListener;
import dev.idem.webhooks.WebhookProcessor;
import jakarta.servlet.Servlet;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletRegistration;
import jakarta.servlet.http.HttpServlet;
import java.nio.file.Path;
import java.time.Clock;
import java.time.ZoneOffset;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.ServletContextInitializer;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

/**
 * Review: the starter hands an app's {@link Clock} bean to the sources (received times) and to the
 * processor (leases, due times), because "a processor on another one ... found events accepted
 * under a Clock bean ... due only in its future" (IdemWebhooksAutoConfiguration). The inbox itself
 * is opened without it, on the system clock, and {@link WebhookInbox#redrive} stamps the re-driven
 * event due at the inbox's now. With a Clock bean behind the system clock (a test configuration
 * pinned to a date, as this module's own TestApp does; docs/webhooks.md calls a fixed Clock bean
 * legitimate), a re-driven dead letter is due only in the processor's future: it is never run
 * again, though redrive returned true and the event shows PENDING. ({@code purgeDone} and
 * {@code oldestWaiting} mix the two clocks the same way.)
 *
 * <p>The first run is the started processor's (a latch on the dead letter, no sleep); the re-drive
 * is then offered to {@code processDue}, which claims by the processor's clock, and the started
 * processor, which the redrive wakes, may take it first: a latch on its being processed.
 */
class WebhookRedriveClockReviewTest {
  @Test
  void aRedrivenDeadLetterRunsAgainUnderTheAppsClock(@TempDir Path dir) {
    WebhookVectors.Vector v = WebhookVectors.playable().stream()
        .filter(x -> x.scheme().equals("stripe") && x.valid()).findFirst().orElseThrow();
    AtomicInteger runs = new AtomicInteger();
    CountDownLatch dead = new CountDownLatch(1);
    CountDownLatch processed = new CountDownLatch(1);
    new WebApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemWebhooksAutoConfiguration.class))
        .withBean(Clock.class, () -> Clock.fixed(TestApp.VECTORS_NOW, ZoneOffset.UTC))
        .withBean("deadLetters", WebhookListener.class, () -> a -> {
          if (a instanceof WebhookActivity.DeadLettered) {
            dead.countDown();
          } else if (a instanceof WebhookActivity.Processed) {
            processed.countDown(); // told once DONE is recorded
          }
        })
        .withBean("anyEvent", WebhookSubscription.class, () -> WebhookSubscription.on(WebhookSubscription.ANY, e -> {
          if (runs.incrementAndGet() == 1) {
            throw new PermanentWebhookException("the order service refused it; fixed by a deploy, then re-driven");
          }
        }))
        .withPropertyValues("idem.directory=" + dir, "idem.webhooks.sources.stripe.scheme=stripe",
            "idem.webhooks.sources.stripe.secrets[0]=" + WebhookVectors.secret("stripe"))
        .run(context -> {
          assertTrue(context.getStartupFailure() == null, String.valueOf(context.getStartupFailure()));
          AtomicReference<Servlet> endpoint = new AtomicReference<>();
          ServletContext servletContext = mock(ServletContext.class);
          when(servletContext.addServlet(anyString(), any(Servlet.class))).thenAnswer(inv -> {
            endpoint.set(inv.getArgument(1));
            return mock(ServletRegistration.Dynamic.class);
          });
          context.getBean("idemWebhookEndpoints", ServletContextInitializer.class).onStartup(servletContext);
          MockHttpServletRequest request = new MockHttpServletRequest("POST", "/webhooks/stripe");
          v.headers().forEach(request::addHeader);
          request.setContent(v.body());
          MockHttpServletResponse response = new MockHttpServletResponse();
          ((HttpServlet) endpoint.get()).service(request, response);
          assertEquals(200, response.getStatus(), response.getContentAsString());

          assertTrue(dead.await(30, TimeUnit.SECONDS), "the first run made the event a dead letter");
          WebhookInbox inbox = context.getBean(WebhookInbox.class);
          InboxEntry entry = inbox.deadLetters(10).get(0);
          assertTrue(inbox.redrive(entry.source(), entry.eventId()), "re-driven");

          // Due now, it runs on processDue or on the started processor, which the redrive wakes and
          // which may claim it first; either way it runs now, once.
          WebhookProcessor processor = context.getBean(WebhookProcessor.class);
          processor.processDue(10);
          boolean ranAgain = processed.await(30, TimeUnit.SECONDS);
          InboxEntry after = inbox.find(entry.source(), entry.eventId()).orElseThrow();
          assertTrue(ranAgain, "the re-driven event is due now and runs; actual: not due for the processor, whose"
              + " clock reads " + TestApp.VECTORS_NOW + ", while redrive made it due at the inbox's (system) now, "
              + after.nextAttemptAt() + " (state " + after.state() + ", handler runs " + runs.get() + ")");
          assertEquals(InboxState.DONE, after.state());
          assertEquals(2, runs.get(), "the first run, then the re-driven one");
        });
  }
}
