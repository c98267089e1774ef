package dev.idem.spring.internal;

import org.springframework.beans.factory.BeanFactory;

/** Looks up the transaction manager through {@link TransactionalGuard}, which an app without spring-tx never loads. */
public final class Transactions {
  private Transactions() {}

  /** The app's PlatformTransactionManager, or null; throws NoClassDefFoundError without spring-tx. */
  public static Object manager(BeanFactory beans) {
    return TransactionalGuard.manager(beans);
  }
}
