package dev.idem.testkit.contract;

import dev.idem.core.InMemoryJournal;
import dev.idem.core.spi.Journal;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;

/**
 * The contract against a journal that keeps the default of {@link Journal#findDue(java.time.Instant,
 * String, java.util.Set, dev.idem.core.OperationRecord, int)} (a journal written before that method,
 * which reads every name's due operations and keeps those of the names asked for).
 */
class DefaultFindDueOfNamesContractTest extends JournalContract {
  private final InMemoryJournal delegate = new InMemoryJournal();
  private final Journal journal = (Journal) Proxy.newProxyInstance(Journal.class.getClassLoader(),
      new Class<?>[] {Journal.class}, (proxy, method, args) -> {
        if (method.getName().equals("findDue") && args.length == 5) {
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
