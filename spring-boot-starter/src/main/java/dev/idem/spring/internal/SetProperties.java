package dev.idem.spring.internal;

import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.ConfigurationPropertyState;
import org.springframework.core.env.Environment;

/**
 * Which keys of a settings record the app's property sources actually set, as opposed to bound from
 * their defaults: a value equal to the default (an explicit {@code idem.server.key-header=Idempotency-Key})
 * is still a statement that the app expects the feature to run. Keys are read from the record's
 * components, so that a setting added to the record is covered without a list to keep. Relaxed
 * spellings ({@code keyHeader}, {@code KEY_HEADER}, {@code routes[0]}) count as the key they bind to.
 */
public final class SetProperties {
  private SetProperties() {}

  /**
   * The canonical names ({@code prefix.kebab-case}) of {@code settings}' components that some
   * property source of {@code environment} sets, a list's or map's elements included, in the
   * record's order.
   *
   * @param environment the app's environment
   * @param prefix the record's prefix, in canonical form, such as {@code idem.server}
   * @param settings the record class bound at {@code prefix}
   * @return the set keys; empty if none
   */
  public static List<String> of(Environment environment, String prefix, Class<? extends Record> settings) {
    Iterable<ConfigurationPropertySource> sources = ConfigurationPropertySources.get(environment);
    List<String> set = new ArrayList<>();
    for (RecordComponent c : settings.getRecordComponents()) {
      String key = prefix + "." + kebab(c.getName());
      ConfigurationPropertyName name = ConfigurationPropertyName.of(key);
      for (ConfigurationPropertySource source : sources) {
        if (source.getConfigurationProperty(name) != null
            || source.containsDescendantOf(name) == ConfigurationPropertyState.PRESENT) {
          set.add(key);
          break;
        }
      }
    }
    return set;
  }

  private static String kebab(String component) {
    StringBuilder sb = new StringBuilder();
    for (char ch : component.toCharArray()) {
      if (Character.isUpperCase(ch)) {
        sb.append('-').append(Character.toLowerCase(ch));
      } else {
        sb.append(ch);
      }
    }
    return sb.toString();
  }
}
