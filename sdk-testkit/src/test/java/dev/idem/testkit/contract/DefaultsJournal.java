package dev.idem.testkit.contract;

import dev.idem.core.InMemoryJournal;
import dev.idem.core.spi.Journal;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.function.Predicate;

/**
 * An in-memory journal that keeps the SPI's defaults of the methods {@code keepDefault} names, as
 * a journal written before those methods does, and forwards every other call: what the
 * {@code Default*ContractTest}s hold to the contract.
 */
final class DefaultsJournal {
  private DefaultsJournal() {}

  static Journal keeping(Predicate<Method> keepDefault) {
    InMemoryJournal delegate = new InMemoryJournal();
    return (Journal) Proxy.newProxyInstance(Journal.class.getClassLoader(), new Class<?>[] {Journal.class},
        (proxy, method, args) -> {
          if (keepDefault.test(method)) {
            return InvocationHandler.invokeDefault(proxy, method, args);
          }
          try {
            return method.invoke(delegate, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
  }
}
