package dev.idem.spring.jpa;

import dev.idem.spring.server.Idempotent;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.http.HttpStatus;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

/**
 * An app whose handler writes through JPA, in transactional mode: Boot's transaction manager is
 * then a JpaTransactionManager, and the guard's claim must commit with Hibernate's writes. In a
 * child JVM of {@link TransactionalJpaKillTest}, {@code idem.test.kill} says where the first
 * order of one item halts the JVM ({@code before-commit:ITEM} or {@code after-commit:ITEM}).
 */
@SpringBootApplication
public class JpaApp {
  @RestController
  static class Orders {
    private static final String KILL = System.getProperty("idem.test.kill", "");
    private final AtomicBoolean armed = new AtomicBoolean(!KILL.isEmpty());

    @PersistenceContext
    private EntityManager em;

    @PostMapping("/orders")
    @ResponseStatus(HttpStatus.CREATED)
    @Idempotent(transactional = true)
    Map<String, Object> create(@RequestBody Map<String, Object> order) {
      String item = String.valueOf(order.get("item"));
      // persist() needs a JPA transaction: it throws unless the guard's transaction is one.
      em.persist(new OrderRow(item));
      em.flush();
      if (KILL.endsWith(":" + item) && armed.getAndSet(false)) {
        if (KILL.startsWith("before-commit")) {
          Runtime.getRuntime().halt(99); // the row is flushed, the transaction is not committed
        }
        TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
          @Override
          public void afterCommit() {
            Runtime.getRuntime().halt(99); // committed; the response never leaves
          }
        });
      }
      Long count = em.createQuery("SELECT COUNT(o) FROM OrderRow o", Long.class).getSingleResult();
      return Map.of("item", item, "orders", count);
    }
  }
}
