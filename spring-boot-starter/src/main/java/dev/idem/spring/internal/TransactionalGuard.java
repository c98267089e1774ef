package dev.idem.spring.internal;

import dev.idem.server.CapturedResponse;
import dev.idem.server.Claim;
import dev.idem.server.GuardRequest;
import dev.idem.server.GuardResponse;
import dev.idem.server.IdempotencyGuard;
import dev.idem.server.IdempotencyStoreException;
import dev.idem.server.servlet.IdempotencyFilter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Transactional mode in a Spring app: the claim, the handler (the rest of the filter chain, whose
 * JdbcTemplate or JPA joins the transaction, since it is bound to the thread) and the stored result
 * on one connection, in one transaction that Spring begins and commits. The answer is sent only
 * after the commit; a failed commit or a rolled-back transaction (an inner
 * {@code @Transactional} marked it rollback-only) is answered 503: nothing committed, so a retry
 * is safe. A handler that throws rolls everything back: an exception Spring MVC left unanswered goes
 * on to the container, and the answer Spring MVC made of one ({@link HandlerFailures}) is sent but
 * not stored, so that the retry runs the handler again.
 * Only this class touches spring-jdbc and spring-tx, so an app without them never loads it.
 */
final class TransactionalGuard {
  private static final Logger LOG = LoggerFactory.getLogger(TransactionalGuard.class);

  private TransactionalGuard() {}

  /** The app's transaction manager, or null. */
  static Object manager(BeanFactory beans) {
    return beans.getBeanProvider(PlatformTransactionManager.class).getIfAvailable();
  }

  static void run(IdempotencyGuard guard, IdempotencyFilter filter, DataSource ds, Object manager,
      HttpServletRequest request, HttpServletResponse response, FilterChain chain) throws IOException, ServletException {
    TransactionTemplate tx = new TransactionTemplate((PlatformTransactionManager) manager);
    GuardRequest guardRequest = filter.guardRequest(request);
    GuardResponse answer;
    try {
      answer = tx.execute(status -> {
        Connection c = DataSourceUtils.getConnection(ds);
        try {
          return guard.joinTransaction(c, guardRequest, (conn, claim, body) -> {
            CachedBodyRequest req = new CachedBodyRequest(request, body);
            if (claim != null) {
              req.setAttribute(Claim.ATTRIBUTE, claim);
            }
            BufferedResponse res = new BufferedResponse(response);
            HandlerFailures.watch(req);
            try {
              chain.doFilter(req, res);
            } catch (IOException | ServletException e) {
              throw new ChainFailure(e);
            }
            Throwable thrown = HandlerFailures.thrown(req);
            if (thrown != null) {
              // A runtime exception, so that the guard and then Spring roll back the claim and the write.
              throw new AnsweredFailure(res.captured(), thrown);
            }
            return res.captured();
          });
        } catch (IOException | SQLException e) {
          throw new ChainFailure(e);
        } finally {
          DataSourceUtils.releaseConnection(c, ds);
        }
      });
    } catch (AnsweredFailure e) {
      LOG.debug("The guarded handler threw and Spring MVC answered {}; rolled back, not stored",
          e.answer.status(), e.getCause());
      IdempotencyFilter.send(request, response,
          new GuardResponse(e.answer.status(), e.answer.headers(), e.answer.body() == null ? new byte[0] : e.answer.body()));
      return;
    } catch (ChainFailure e) {
      Throwable cause = e.getCause();
      if (cause instanceof IOException io) {
        throw io;
      }
      if (cause instanceof ServletException se) {
        throw se;
      }
      throw new ServletException(cause);
    } catch (IdempotencyStoreException | TransactionException e) {
      LOG.warn("Idempotency transaction did not commit; answering 503 (a retry is safe)", e);
      IdempotencyFilter.send(request, response, guard.unavailableResponse());
      return;
    }
    IdempotencyFilter.send(request, response, answer);
  }

  /** The handler threw and Spring MVC answered the exception: what to send after the rollback. */
  private static final class AnsweredFailure extends RuntimeException {
    final CapturedResponse answer;

    AnsweredFailure(CapturedResponse answer, Throwable cause) {
      super(cause);
      this.answer = answer;
    }
  }

  /** Carries a checked exception of the chain out of the transaction callback, rolling it back. */
  private static final class ChainFailure extends RuntimeException {
    ChainFailure(Exception cause) {
      super(cause);
    }
  }
}
