package dev.idem.cli;

import java.util.Map;
import java.util.Optional;

/**
 * Which library a class missing at run time belongs to, for the one line that reports it: the
 * JVM's {@code NoClassDefFoundError: com/fasterxml/jackson/databind/ObjectMapper} does not say
 * that jackson-databind is what a hand-made class path left out. Covers the libraries the CLI runs
 * on; a class of any other is reported by its name alone.
 */
final class MissingLibrary {
  /** Package prefixes, most specific first within a family, and the artifact each is in. */
  private static final Map<String, String> LIBRARIES = Map.ofEntries(
      Map.entry("com.fasterxml.jackson.databind.", "jackson-databind"),
      Map.entry("com.fasterxml.jackson.core.", "jackson-core"),
      Map.entry("com.fasterxml.jackson.annotation.", "jackson-annotations"),
      Map.entry("com.fasterxml.jackson.datatype.jsr310.", "jackson-datatype-jsr310"),
      Map.entry("com.fasterxml.jackson.datatype.jdk8.", "jackson-datatype-jdk8"),
      Map.entry("org.slf4j.", "slf4j-api"),
      Map.entry("org.sqlite.", "sqlite-jdbc"),
      Map.entry("org.postgresql.", "postgresql"),
      Map.entry("org.h2.", "h2"),
      Map.entry("picocli.", "picocli"),
      Map.entry("dev.idem.core.", "idem-sdk-core"),
      Map.entry("dev.idem.jdbc.", "idem-persistence"),
      Map.entry("dev.idem.storage.", "idem-storage"),
      Map.entry("dev.idem.webhooks.", "idem-webhooks"),
      Map.entry("dev.idem.server.", "idem-server"));

  private MissingLibrary() {}

  /**
   * What to add to the line for {@code e}: the library of the class it says is missing, if it is a
   * {@link NoClassDefFoundError} (or caused by a {@link ClassNotFoundException}) of a class of a known
   * library. Not for "Could not initialize class": that class is there, its initialisation failed.
   */
  static Optional<String> explain(Throwable e) {
    for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if ((c instanceof NoClassDefFoundError || c instanceof ClassNotFoundException) && c.getMessage() != null
          && !c.getMessage().startsWith("Could not initialize class")) {
        String name = c.getMessage().replace('/', '.');
        Optional<String> library = LIBRARIES.entrySet().stream().filter(l -> name.startsWith(l.getKey()))
            .map(Map.Entry::getValue).findFirst();
        if (library.isPresent()) {
          return Optional.of("the library " + library.get() + " is missing from the class path: run the -all jar,"
              + " which holds every library the CLI needs, or add " + library.get() + " to the class path");
        }
      }
    }
    return Optional.empty();
  }
}
