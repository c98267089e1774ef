package dev.idem.testkit.contract;

import dev.idem.core.InMemoryJournal;
import dev.idem.core.spi.Journal;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Set;

/**
 * The contract against a journal that keeps the defaults of {@link Journal#beginAndClaim} (a begin,
 * then a claim) and {@link Journal#recordOutcomesDelivered} (one recordOutcomeDelivered each), as a
 * journal written before those methods does: the defaults keep the contract that the journals
 * which override them are held to.
 */
class DefaultBeginAndClaimContractTest extends JournalContract {
  private static final Set<String> DEFAULTS = Set.of("beginAndClaim", "recordOutcomesDelivered");

  private final InMemoryJournal delegate = new InMemoryJournal();
  private final Journal journal = (Journal) Proxy.newProxyInstance(Journal.class.getClassLoader(),
      new Class<?>[] {Journal.class}, (proxy, method, args) -> {
        if (DEFAULTS.contains(method.getName())) {
          return InvocationHandler.invokeDefault(proxy, method, args);
        }
        return forward(method, args);
      });

  private Object forward(Method method, Object[] args) throws Throwable {
    try {
      return method.invoke(delegate, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  @Override
  protected Journal journal() {
    return journal;
  }
}
