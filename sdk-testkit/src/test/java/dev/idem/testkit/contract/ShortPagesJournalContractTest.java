package dev.idem.testkit.contract;

import dev.idem.core.InMemoryJournal;
import dev.idem.core.spi.Journal;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.List;
import java.util.Set;
import java.lang.reflect.Proxy;

/**
 * The contract against a journal whose paged reads return one record a page while more follow, as
 * {@link Journal}'s paging rule allows (only an empty page is the last; the JDBC journal ends a page
 * early by the bytes it holds). A contract check that took a first short page for all there is
 * would fail such a journal although it keeps the contract.
 */
class ShortPagesJournalContractTest extends JournalContract {
  private static final Set<String> PAGED = Set.of("findDue", "findByState", "findUndelivered");

  private final InMemoryJournal delegate = new InMemoryJournal();
  private final Journal journal = (Journal) Proxy.newProxyInstance(Journal.class.getClassLoader(),
      new Class<?>[] {Journal.class}, (proxy, method, args) -> {
        Object result = forward(method, args);
        if (PAGED.contains(method.getName()) && result instanceof List<?> page && page.size() > 1) {
          return List.copyOf(page.subList(0, 1));
        }
        return result;
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
