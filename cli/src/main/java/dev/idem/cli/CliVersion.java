package dev.idem.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;
import picocli.CommandLine.IVersionProvider;

/**
 * What {@code idem -V} prints: the version of the build that made this jar, from a resource Maven
 * filters ({@code dev/idem/cli/version.properties}), so that it is never a number typed by hand.
 */
final class CliVersion implements IVersionProvider {
  static final String RESOURCE = "version.properties";

  @Override
  public String[] getVersion() {
    return new String[] {"idem " + version(), "Java " + System.getProperty("java.version")};
  }

  /** The project version this jar was built as. */
  static String version() {
    try (InputStream in = CliVersion.class.getResourceAsStream(RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException("dev/idem/cli/" + RESOURCE + " is missing from the class path");
      }
      Properties p = new Properties();
      p.load(in);
      return p.getProperty("version");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
