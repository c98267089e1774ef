package dev.idem.jdbc.support;

import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionConfigurationException;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Gives tests a real PostgreSQL: one throwaway cluster per test run (started on first use, stopped
 * and deleted when the run ends) and a fresh database per test parameter of type {@link PgDatabase}.
 *
 * <p>Without PostgreSQL binaries under {@code /usr/lib/postgresql/<version>/bin}, the tests are
 * skipped LOUDLY (an assumption failure plus a line on stderr), except when the environment
 * variable {@code CI} is {@code true}: then they fail, so CI never passes without running them.
 */
public final class PostgresExtension implements BeforeAllCallback, ParameterResolver {
  private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(PostgresExtension.class);

  /** A fresh database on the shared cluster. */
  public record PgDatabase(PostgresCluster cluster, String name) {
    /** A new DataSource to this database (each journal instance may take its own). */
    public PGSimpleDataSource dataSource() {
      return cluster.dataSource(name);
    }
  }

  /** Holds the cluster in the root store so that JUnit closes it when the whole run ends. */
  private record Holder(PostgresCluster cluster) implements ExtensionContext.Store.CloseableResource, AutoCloseable {
    @Override
    public void close() throws Exception {
      if (cluster != null) {
        cluster.close();
      }
    }
  }

  @Override
  public void beforeAll(ExtensionContext context) {
    cluster(context);
  }

  private static PostgresCluster cluster(ExtensionContext context) {
    Holder h = context.getRoot().getStore(NS).getOrComputeIfAbsent(Holder.class, k -> {
      Optional<Path> bin = PostgresCluster.findBinaries();
      if (bin.isEmpty()) {
        String message = "PostgreSQL binaries not found under /usr/lib/postgresql/*/bin:"
            + " PostgreSQL journal tests were NOT RUN";
        if ("true".equalsIgnoreCase(System.getenv("CI"))) {
          throw new ExtensionConfigurationException(message + " (CI=true, so this is a failure)");
        }
        System.err.println("!!!!! SKIPPED: " + message + " (install postgresql to run them) !!!!!");
        return new Holder(null);
      }
      try {
        return new Holder(PostgresCluster.start(bin.get()));
      } catch (Exception e) {
        throw new ExtensionConfigurationException("could not start a throwaway PostgreSQL cluster", e);
      }
    }, Holder.class);
    Assumptions.assumeTrue(h.cluster() != null,
        "SKIPPED: PostgreSQL binaries not found under /usr/lib/postgresql/*/bin (set CI=true to make this fail)");
    return h.cluster();
  }

  @Override
  public boolean supportsParameter(ParameterContext p, ExtensionContext e) {
    return p.getParameter().getType() == PgDatabase.class;
  }

  @Override
  public Object resolveParameter(ParameterContext p, ExtensionContext e) {
    PostgresCluster cluster = cluster(e);
    try {
      return new PgDatabase(cluster, cluster.createDatabase());
    } catch (Exception ex) {
      throw new ParameterResolutionException("could not create a test database", ex);
    }
  }
}
