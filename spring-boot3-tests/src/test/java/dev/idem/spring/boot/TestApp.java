package dev.idem.spring.boot;

import dev.idem.spring.server.Idempotent;
import dev.idem.spring.webhooks.WebhookSubscription;
import dev.idem.webhooks.WebhookEvent;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.http.HttpStatus;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.web.client.RestTemplate;

/**
 * A Spring Boot app as a user writes one with the starter: an order endpoint in transactional
 * mode, a payment endpoint guarded by idem.server.routes, a webhook subscription, and its own
 * RestTemplate bean. Only what Boot 3.5 and 4.0 share, so that both test modules compile it.
 */
@SpringBootApplication
public class TestApp {
  /** The vectors' "now" (2025-12-01T12:00:00Z): the webhook sources check signed timestamps against it. */
  static final Instant VECTORS_NOW = Instant.ofEpochSecond(1764590400L);

  @Bean
  Clock clock() {
    return Clock.fixed(VECTORS_NOW, ZoneOffset.UTC);
  }

  @Bean
  RestTemplate restTemplate() {
    return new RestTemplate();
  }

  @Bean
  Received received() {
    return new Received();
  }

  @Bean
  FailNext failNext() {
    return new FailNext();
  }

  @Bean
  WebhookSubscription payments(Received received) {
    return WebhookSubscription.on("payment.succeeded", received.events::add);
  }

  @Bean
  WebhookSubscription everythingElse(Received received) {
    return WebhookSubscription.on(WebhookSubscription.ANY, received.events::add);
  }

  /** The events the app's handlers got. */
  static final class Received {
    final List<WebhookEvent> events = new CopyOnWriteArrayList<>();
  }

  /**
   * In a child JVM of {@link TransactionalKillTest} only: where the first order of one item halts
   * the JVM ({@code idem.test.kill}: {@code before-commit:ITEM} or {@code after-commit:ITEM}).
   */
  @Bean
  KillSwitch killSwitch() {
    return new KillSwitch(System.getProperty("idem.test.kill", ""));
  }

  static final class KillSwitch {
    final String where;
    final String item;
    final AtomicBoolean armed;

    KillSwitch(String setting) {
      int colon = setting.indexOf(':');
      this.where = colon < 0 ? setting : setting.substring(0, colon);
      this.item = colon < 0 ? "" : setting.substring(colon + 1);
      this.armed = new AtomicBoolean(!where.isEmpty());
    }

    void atInsert(Object orderItem) {
      if (!item.equals(String.valueOf(orderItem))) {
        return;
      }
      if (where.equals("before-commit") && armed.getAndSet(false)) {
        Runtime.getRuntime().halt(99); // the row is written, the transaction is not committed
      }
      if (where.equals("after-commit") && armed.getAndSet(false)) {
        TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
          @Override
          public void afterCommit() {
            Runtime.getRuntime().halt(99); // committed; the response never leaves
          }
        });
      }
    }
  }

  /** Makes the next order insert its row and then throw, as a handler that fails after its write. */
  static final class FailNext {
    final AtomicBoolean armed = new AtomicBoolean();
  }

  @RestController
  static class Orders {
    private final JdbcTemplate jdbc;
    private final FailNext failNext;

    private final KillSwitch killSwitch;

    Orders(JdbcTemplate jdbc, FailNext failNext, KillSwitch killSwitch) {
      this.jdbc = jdbc;
      this.failNext = failNext;
      this.killSwitch = killSwitch;
    }

    @PostMapping("/orders")
    @ResponseStatus(HttpStatus.CREATED)
    @Idempotent(transactional = true)
    Map<String, Object> create(@RequestBody Map<String, Object> order) {
      jdbc.update("INSERT INTO orders(item) VALUES (?)", String.valueOf(order.get("item")));
      killSwitch.atInsert(order.get("item"));
      if (failNext.armed.getAndSet(false)) {
        throw new IllegalStateException("failed after the insert");
      }
      Long count = jdbc.queryForObject("SELECT COUNT(*) FROM orders", Long.class);
      return Map.of("item", order.get("item"), "orders", count);
    }

    @PostMapping("/payments")
    @ResponseStatus(HttpStatus.CREATED)
    Map<String, Object> pay(@RequestBody Map<String, Object> payment) {
      jdbc.update("INSERT INTO payments(amount) VALUES (?)", String.valueOf(payment.get("amount")));
      return Map.of("paid", payment.get("amount"));
    }
  }
}
