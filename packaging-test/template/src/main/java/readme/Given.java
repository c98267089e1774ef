package readme;

import dev.idem.core.JournalException;
import dev.idem.jdbc.JdbcJournal;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.file.Path;
import okhttp3.Interceptor;
import okhttp3.MediaType;

/**
 * What a README quickstart may leave to the app: the names its marker lists after {@code given=},
 * each declared as a local variable before the block's first statement
 * ({@code var url = readme.Given.url();}). Every public static no-argument method here is one
 * such name; the generator refuses any other. Keep this list short: a quickstart should declare
 * what it can. The values point the quickstart at the reference server the test started.
 */
public final class Given {
  private Given() {}

  /** What the wrapper runs: the block's statements. */
  public interface Body {
    /** @throws Exception whatever the block throws */
    void run() throws Exception;
  }

  /**
   * Runs a quickstart, then ends the JVM: a quickstart may leave a dispatcher running, as an app's
   * main would, so the JVM would not stop on its own. Exit status 0 when the block returned,
   * 1 (and the stack trace) when it threw.
   */
  public static void run(Body body) {
    try {
      body.run();
    } catch (Throwable t) {
      t.printStackTrace();
      System.out.flush();
      System.exit(1);
    }
    System.out.flush();
    System.exit(0);
  }

  /** The URL of the service's {@code POST /orders}: the reference server the test started. */
  public static String url() {
    String url = System.getProperty("readme.url");
    if (url == null) {
      throw new IllegalStateException("-Dreadme.url is missing: the quickstarts run from QuickstartsRunTest");
    }
    return url;
  }

  /** A directory for an embedded journal, in the quickstart's own (fresh) working directory. */
  public static Path dir() {
    return Path.of("idem-journal");
  }

  /** The app's API token (what its auth interceptor or header supplier sends). */
  public static String token() {
    return "readme-token";
  }

  /** The order the quickstart creates. */
  public static String json() {
    return "{\"cart\":\"cart-42\",\"items\":[{\"sku\":\"A-1\",\"quantity\":2}]}";
  }

  /** OkHttp's media type of {@link #json()}. */
  public static MediaType JSON() {
    return MediaType.get("application/json");
  }

  /** The app's interceptor that adds its credentials; it must come after Idem's. */
  public static Interceptor authInterceptor() {
    return chain -> chain.proceed(chain.request().newBuilder()
        .header("Authorization", "Bearer " + token()).build());
  }

  /** A java.net.http POST of {@link #json()} to {@link #url()}. */
  public static HttpRequest request() {
    return HttpRequest.newBuilder(URI.create(url()))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(json()))
        .build();
  }

  /**
   * An embedded journal in the quickstart's own (fresh) working directory.
   *
   * @throws JournalException if it cannot be opened
   */
  public static JdbcJournal journal() throws JournalException {
    return JdbcJournal.openEmbedded(Path.of("given-journal"));
  }
}
