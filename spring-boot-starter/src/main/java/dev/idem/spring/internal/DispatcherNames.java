package dev.idem.spring.internal;

import dev.idem.core.outbox.OutboxDispatcher;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * At startup, refuses an operation name that two OutboxDispatcher beans both register. Each
 * dispatcher delivers every queued operation of its names, so both would claim such an operation,
 * and which transport sent it (and with it which client settings, base URL and credentials) would
 * depend on which one claimed it first: silent and different from run to run. Refused before any
 * dispatcher starts, so nothing queued is sent meanwhile.
 */
public final class DispatcherNames {
  private DispatcherNames() {}

  /**
   * Throws if an operation name is registered on more than one dispatcher.
   *
   * @param dispatchers every OutboxDispatcher bean, by bean name (one instance under two names is
   *     one dispatcher, not a conflict)
   * @throws IllegalStateException naming each such operation name, the beans that register it, and
   *     the fix
   */
  public static void requireOneDispatcherPerName(Map<String, OutboxDispatcher> dispatchers) {
    Map<String, List<String>> beansByName = new TreeMap<>();
    Map<OutboxDispatcher, Boolean> seen = new IdentityHashMap<>();
    for (Map.Entry<String, OutboxDispatcher> bean : dispatchers.entrySet()) {
      if (seen.put(bean.getValue(), Boolean.TRUE) != null) {
        continue;
      }
      for (String name : bean.getValue().operationNames()) {
        beansByName.computeIfAbsent(name, n -> new ArrayList<>()).add(bean.getKey());
      }
    }
    Map<String, List<String>> shared = new LinkedHashMap<>();
    beansByName.forEach((name, beans) -> {
      if (beans.size() > 1) {
        shared.put(name, beans);
      }
    });
    if (shared.isEmpty()) {
      return;
    }
    StringBuilder message = new StringBuilder("Idem: ");
    for (Map.Entry<String, List<String>> e : shared.entrySet()) {
      message.append("operation '").append(e.getKey()).append("' is registered on the OutboxDispatcher beans ")
          .append(quoted(e.getValue())).append("; ");
    }
    message.append("each would deliver the queued operations of ")
        .append(shared.size() == 1 ? "that name" : "those names")
        .append(", and which transport (its client settings, base URL, credentials) sent one would depend on"
            + " which dispatcher claimed it first. Register each operation name on one OutboxDispatcher bean only.");
    throw new IllegalStateException(message.toString());
  }

  private static String quoted(List<String> beans) {
    StringBuilder s = new StringBuilder();
    for (int i = 0; i < beans.size(); i++) {
      if (i > 0) {
        s.append(i == beans.size() - 1 ? " and " : ", ");
      }
      s.append('\'').append(beans.get(i)).append('\'');
    }
    return s.toString();
  }
}
