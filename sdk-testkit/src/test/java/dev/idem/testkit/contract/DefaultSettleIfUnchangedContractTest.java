package dev.idem.testkit.contract;

import dev.idem.core.InMemoryJournal;
import dev.idem.core.spi.Journal;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;

/**
 * The contract against a journal that keeps {@link Journal#settleIfUnchanged}'s default (a journal
 * written before that method: a re-drive, a claim and a transition): one thread sees it keep the
 * contract and leave the same record; only the single write is left to the journals that override
 * it.
 */
class DefaultSettleIfUnchangedContractTest extends JournalContract {
  private final InMemoryJournal delegate = new InMemoryJournal();
  private final Journal journal = (Journal) Proxy.newProxyInstance(Journal.class.getClassLoader(),
      new Class<?>[] {Journal.class}, (proxy, method, args) -> {
        if (method.getName().equals("settleIfUnchanged")) {
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
