package dev.idem.spring.internal;

import dev.idem.server.CapturedResponse;
import dev.idem.server.Claim;
import dev.idem.server.GuardRequest;
import dev.idem.server.GuardResponse;
import dev.idem.server.IdempotencyGuard;
import dev.idem.server.IdempotencyStoreException;
import dev.idem.server.servlet.IdempotencyFilter;
import dev.idem.server.servlet.UnreadableFormException;
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
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.web.servlet.HandlerMapping;
import org.springframework.web.util.UrlPathHelper;

/**
 * Transactional mode in a Spring app: the claim, the handler (the rest of the filter chain, whose
 * JdbcTemplate or JPA joins the transaction, since it is bound to the thread) and the stored result
 * on one connection, in one transaction that Spring begins and commits. The answer is sent only
 * after the commit; a failed commit or a rolled-back transaction (an inner
 * {@code @Transactional} marked it rollback-only), however the transaction manager reports it
 * (JPA's, flushing at the commit, throws a translated {@code DataAccessException}), is answered
 * 503: nothing committed, so a retry is safe. The handler's pending ORM changes are flushed when it
 * returns, inside the guard's savepoint, so that an answer the guard releases (408, 425, 429, 503)
 * takes them with the claim; a failure of that flush is answered as the commit's would be. A
 * handler that throws rolls everything back: an exception Spring MVC left unanswered goes on to
 * the container, and the answer Spring MVC made of one ({@link HandlerFailures}) is sent but
 * not stored, so that the retry runs the handler again. A released answer rolls back the
 * transaction when the guard began it (not only to the guard's savepoint), so that nothing the
 * handler left for the commit (a before-commit listener's insert, an after-commit callback) runs.
 * In a transaction the guard joined, it can undo only its savepoint: what the handler registered
 * with the transaction runs when its owner commits.
 *
 * <p>The answer is held in memory until the commit, up to a limit
 * ({@code idem.server.max-buffered-body-bytes}, 8 MiB by default; what is stored is capped
 * separately, by the guard's {@code maxCapturedBody}). A handler that writes past it cannot have
 * its answer sent whole after the commit, and sending part of it, or sending it before the commit,
 * would break the promise that a client gets an answer only for committed work and always all of
 * it. So the run rolls back (claim and writes), nothing is stored, the overflow is logged, and the
 * client gets the guard's 500 ({@link IdempotencyGuard#failedResponse}): a retry with the same key
 * runs the handler again, and fails the same way until the answer fits. Such a handler belongs in
 * lease mode, which streams an answer past {@code maxCapturedBody} to the client and stores it
 * without its body.
 *
 * <p>Transactional mode cannot cover a handler that answers asynchronously: the transaction ends
 * when the handler returns, before such an answer exists. {@link GuardFilter} refuses the
 * annotated controller methods it can tell from their return type, before they run; everything
 * else (a functional endpoint's {@code ServerResponse.async(...)}, a method declared to return
 * {@code Object} that returns a {@code CompletableFuture}, any handler that starts async
 * processing) is caught here when the chain returns with async processing started. The run then
 * rolls back (claim and the writes made before the handler returned), nothing is stored, the
 * request is answered with the guard's 500 ({@link IdempotencyGuard#failedResponse}) and ended
 * ({@code AsyncContext.complete()}), and the late answer, when it comes, is dropped: it reaches
 * neither the client nor the store. The error is logged with the request and its mapping. A retry
 * with the same key runs the handler again and fails the same way: such a handler belongs in lease
 * mode. What the async part does on its own thread is outside the transaction and not undone.
 *
 * <p>Only this class touches spring-jdbc and spring-tx, so an app without them never loads it.
 */
final class TransactionalGuard {
  private static final Logger LOG = LoggerFactory.getLogger(TransactionalGuard.class);

  private TransactionalGuard() {}

  /** The app's transaction manager, or null. */
  static Object manager(BeanFactory beans) {
    return beans.getBeanProvider(PlatformTransactionManager.class).getIfAvailable();
  }

  /**
   * A request without a key to a transactional handler (one whose key is not required): nothing
   * is claimed or stored, and its body is neither read nor limited, but its handler, written for
   * transactional mode, still runs in a transaction, begun and committed as the guard's own would
   * be (same manager, same settings): without one, a JPA handler's change would never be written,
   * and a JdbcTemplate handler's writes would each commit alone. As in the keyed run, the answer
   * is held until the commit (up to the same limit; past it, or for an answer that comes
   * asynchronously, the transaction rolls back and the guard's 500 is sent), a failed commit is
   * answered 503, and a handler that throws rolls it back, whether its exception goes on to the
   * container or Spring MVC answered it (that answer is then sent).
   */
  static void runUnkeyed(IdempotencyGuard guard, Object manager, long bufferLimit, HttpServletRequest request,
      HttpServletResponse response, FilterChain chain) throws IOException, ServletException {
    BufferedResponse res = new BufferedResponse(response, bufferLimit);
    boolean[] returned = {false};
    CapturedResponse answer;
    try {
      answer = template(manager).execute(status -> {
        if (runChain(request, res, chain) != null) {
          // Spring MVC answered the handler's exception: its half-done writes must not commit.
          status.setRollbackOnly();
        }
        returned[0] = true;
        return res.captured();
      });
    } catch (TooLargeAnswer e) {
      LOG.error("The transactional handler of {} {} (no key) wrote an answer over the {} bytes held until its"
          + " transaction commits (idem.server.max-buffered-body-bytes); rolled back, answering 500",
          request.getMethod(), UrlPathHelper.defaultInstance.getPathWithinApplication(request), e.limit, e.getCause());
      IdempotencyFilter.send(request, response, guard.failedResponse());
      return;
    } catch (AsynchronousAnswer e) {
      LOG.error("The transactional handler of {} {} (no key) answered asynchronously: its transaction ends when"
          + " the handler returns. Rolled back, answering 500; use lease mode for this handler",
          request.getMethod(), UrlPathHelper.defaultInstance.getPathWithinApplication(request));
      abandonAsync(request);
      IdempotencyFilter.send(request, response, guard.failedResponse());
      completeAsync(request);
      return;
    } catch (ChainFailure e) {
      if (e.getCause() instanceof IOException io) {
        throw io;
      }
      throw (ServletException) e.getCause();
    } catch (RuntimeException e) {
      if (!returned[0]) {
        throw e;
      }
      // The commit failed (TransactionException, or JPA's translated DataAccessException).
      LOG.warn("The transaction of an unkeyed request to a transactional handler did not commit; answering 503", e);
      IdempotencyFilter.send(request, response, guard.unavailableResponse());
      return;
    }
    res.addCookiesTo(response);
    IdempotencyFilter.send(request, response,
        new GuardResponse(answer.status(), answer.headers(), answer.body() == null ? new byte[0] : answer.body()));
  }

  /** The transaction the guard begins for a transactional handler's request, keyed or not. */
  private static TransactionTemplate template(Object manager) {
    return new TransactionTemplate((PlatformTransactionManager) manager);
  }

  static void run(IdempotencyGuard guard, IdempotencyFilter filter, DataSource ds, Object manager, long bufferLimit,
      HttpServletRequest request, HttpServletResponse response, FilterChain chain) throws IOException, ServletException {
    TransactionTemplate tx = template(manager);
    GuardRequest guardRequest = filter.guardRequest(request);
    GuardResponse answer;
    // Made here so that the cookies of a handler that ran can be added after the commit.
    BufferedResponse res = new BufferedResponse(response, bufferLimit);
    // Whether the callback returned (so a failure after it is the commit's), and how the
    // transaction ended (TransactionSynchronization.STATUS_*; -1 while unknown).
    boolean[] returned = {false};
    int[] outcome = {-1};
    try {
      answer = tx.execute(status -> {
        if (status.isNewTransaction() && TransactionSynchronizationManager.isSynchronizationActive()) {
          TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
            @Override
            public void afterCompletion(int completion) {
              outcome[0] = completion;
            }
          });
        }
        Connection c = DataSourceUtils.getConnection(ds);
        try {
          Claim[] claimed = {null};
          CapturedResponse[] handled = {null};
          GuardResponse answered = guard.joinTransaction(c, guardRequest, (conn, claim, body) -> {
            claimed[0] = claim;
            HttpServletRequest req = IdempotencyFilter.withBody(request, body);
            if (claim != null) {
              req.setAttribute(Claim.ATTRIBUTE, claim);
            }
            Throwable thrown = runChain(req, res, chain);
            if (thrown != null) {
              // A runtime exception, so that the guard and then Spring roll back the claim and the write.
              throw new AnsweredFailure(res.captured(), thrown);
            }
            flush(status);
            handled[0] = res.captured();
            return handled[0];
          });
          if (claimed[0] != null && handled[0] != null && !claimed[0].stores(handled[0].status())
              && status.isNewTransaction()) {
            // Released: the guard rolled back to its savepoint, but a commit would still run what
            // the handler left for it (a before-commit outbox insert, an after-commit message),
            // once per retry. A joined transaction is the caller's to end: the savepoint is all
            // the guard can undo there.
            status.setRollbackOnly();
          }
          returned[0] = true;
          return answered;
        } catch (IOException | SQLException e) {
          throw new ChainFailure(e);
        } finally {
          DataSourceUtils.releaseConnection(c, ds);
        }
      });
    } catch (TooLargeAnswer e) {
      // The guard's path, not getRequestURI(): no ;jsessionid= (a credential) in a log line.
      LOG.error("The transactional handler of {} {} wrote an answer over the {} bytes held until its transaction"
          + " commits (idem.server.max-buffered-body-bytes); rolled back, nothing stored, answering 500. Raise the"
          + " limit, or use lease mode for this handler", request.getMethod(), guardRequest.path(), e.limit,
          e.getCause());
      IdempotencyFilter.send(request, response, guard.failedResponse());
      return;
    } catch (AsynchronousAnswer e) {
      Object pattern = request.getAttribute(HandlerMapping.BEST_MATCHING_PATTERN_ATTRIBUTE);
      LOG.error("The transactional handler of {} {}{} answered asynchronously: transactional mode commits when the"
          + " handler returns, before such an answer exists. Rolled back (claim and writes), nothing stored, answering"
          + " 500; its late answer is dropped. Use lease mode (the default) for this handler: @Idempotent without"
          + " transactional = true, and outside the transactional idem.server.routes (a route decides first)",
          request.getMethod(), guardRequest.path(), pattern == null ? "" : " (mapped to " + pattern + ")");
      abandonAsync(request);
      IdempotencyFilter.send(request, response, guard.failedResponse());
      completeAsync(request);
      return;
    } catch (AnsweredFailure e) {
      LOG.debug("The guarded handler threw and Spring MVC answered {}; rolled back, not stored",
          e.answer.status(), e.getCause());
      res.addCookiesTo(response);
      IdempotencyFilter.send(request, response,
          new GuardResponse(e.answer.status(), e.answer.headers(), e.answer.body() == null ? new byte[0] : e.answer.body()));
      return;
    } catch (ChainFailure e) {
      Throwable cause = e.getCause();
      if (cause instanceof UnreadableFormException unreadable) {
        // The guard's read of the body refused it, before any claim: answered as the lease-mode filter does.
        IdempotencyFilter.refuse(request, response, unreadable);
        return;
      }
      if (cause instanceof IOException io) {
        throw io;
      }
      if (cause instanceof ServletException se) {
        throw se;
      }
      throw new ServletException(cause);
    } catch (FlushFailure e) {
      LOG.warn("The transactional handler's changes could not be written to the database (flushed before its"
          + " transaction commits); rolled back, answering 503 (a retry is safe)", e.getCause());
      IdempotencyFilter.send(request, response, guard.unavailableResponse());
      return;
    } catch (IdempotencyStoreException | TransactionException e) {
      LOG.warn("Idempotency transaction did not commit; answering 503 (a retry is safe)", e);
      IdempotencyFilter.send(request, response, guard.unavailableResponse());
      return;
    } catch (RuntimeException e) {
      if (!returned[0] || outcome[0] == TransactionSynchronization.STATUS_COMMITTED) {
        // The handler's or the guard's own failure, or one after the commit (an afterCommit
        // callback): not a commit that failed, so not "nothing committed, retry".
        throw e;
      }
      // The commit itself failed, however the transaction manager translated it (JPA flushing at
      // the commit: a DataAccessException, not a TransactionException). Nothing committed, or
      // its outcome is unknown: a retry either runs it again or gets the stored answer.
      LOG.warn("Idempotency transaction did not commit; answering 503 (a retry is safe)", e);
      IdempotencyFilter.send(request, response, guard.unavailableResponse());
      return;
    }
    // None if the handler did not run (a replay, a conflict): the answer is the handler's only if it ran.
    res.addCookiesTo(response);
    IdempotencyFilter.send(request, response, answer);
  }

  /**
   * Runs the rest of the filter chain (the handler) inside the transaction's callback, its answer
   * held in {@code res}, and throws what must roll the transaction back: {@link TooLargeAnswer}
   * for an answer over the buffer's limit, {@link AsynchronousAnswer} for one that comes after the
   * handler returned, {@link ChainFailure} for a checked exception of the chain (a runtime one
   * goes on as it is). The same for a keyed run and an unkeyed one, so that both roll back alike.
   *
   * @return the handler's exception that Spring MVC answered (its answer is in {@code res}), or
   *     null if the handler did not throw
   */
  private static Throwable runChain(HttpServletRequest request, BufferedResponse res, FilterChain chain) {
    HandlerFailures.watch(request);
    try {
      chain.doFilter(request, res);
    } catch (IOException | ServletException | RuntimeException e) {
      // Whatever the write's failure became on its way out (a converter's exception, the
      // container's), the cause is the cut answer.
      if (res.overflowed()) {
        throw new TooLargeAnswer(res.limit(), e);
      }
      if (e instanceof RuntimeException r) {
        throw r;
      }
      throw new ChainFailure(e);
    }
    if (request.isAsyncStarted()) {
      // The answer comes later, on another thread, after this transaction would have committed
      // with an empty one.
      throw new AsynchronousAnswer();
    }
    if (res.overflowed()) {
      // The handler (or a PrintWriter, which swallows write failures and may have held the
      // overflowing text until this check flushed it) went on as if its answer had been written.
      throw new TooLargeAnswer(res.limit(), null);
    }
    return HandlerFailures.thrown(request);
  }

  /**
   * Writes what the handler left pending in its ORM session (JPA, Hibernate: they write at the
   * commit) while the guard's savepoint still covers it. Else a released answer (408, 425, 429,
   * 503), which the guard undoes by rolling back to its savepoint, would leave those changes
   * unwritten, and the commit that follows would write and commit them: every retry of the key
   * would make its effect again. Written here, they go with the claim whatever the guard decides,
   * whether Spring's transaction is the guard's or one it joined.
   */
  private static void flush(TransactionStatus status) {
    try {
      status.flush();
    } catch (RuntimeException e) {
      throw new FlushFailure(e);
    }
  }

  /**
   * Marks the request so that the async dispatch that may still bring the handler's late answer
   * ends in {@link GuardFilter} without running anything, and forgets the rolled-back claim, so that
   * nothing takes that dispatch for a lease-mode one to store.
   */
  private static void abandonAsync(HttpServletRequest request) {
    request.setAttribute(GuardFilter.ABANDONED_ASYNC, Boolean.TRUE);
    request.removeAttribute(Claim.ATTRIBUTE);
  }

  /**
   * Ends the request with what was sent: Spring MVC then drops the late result ("request already
   * complete") instead of dispatching it. If that result came first, its dispatch is already
   * pending and cannot be undone; {@link #abandonAsync} makes it a no-op.
   */
  private static void completeAsync(HttpServletRequest request) {
    try {
      request.getAsyncContext().complete();
    } catch (IllegalStateException alreadyDispatched) {
      LOG.debug("The late answer's async dispatch is pending; it will be dropped", alreadyDispatched);
    }
  }

  /** The handler returned before its answer existed: Spring MVC finishes it asynchronously. */
  private static final class AsynchronousAnswer extends RuntimeException {
    AsynchronousAnswer() {
      super("the handler answers asynchronously", null, false, false);
    }
  }

  /** The handler threw and Spring MVC answered the exception: what to send after the rollback. */
  private static final class AnsweredFailure extends RuntimeException {
    final CapturedResponse answer;

    AnsweredFailure(CapturedResponse answer, Throwable cause) {
      super(cause);
      this.answer = answer;
    }
  }

  /** The handler's answer went past the buffer's limit: rolls the transaction back. */
  private static final class TooLargeAnswer extends RuntimeException {
    final long limit;

    TooLargeAnswer(long limit, Throwable cause) {
      super("the answer is over " + limit + " bytes", cause);
      this.limit = limit;
    }
  }

  /**
   * The handler's pending ORM changes failed to reach the database: the failure its commit would
   * have had, found before it. Rolls the transaction back.
   */
  private static final class FlushFailure extends RuntimeException {
    FlushFailure(RuntimeException cause) {
      super(cause);
    }
  }

  /** Carries a checked exception of the chain out of the transaction callback, rolling it back. */
  private static final class ChainFailure extends RuntimeException {
    ChainFailure(Exception cause) {
      super(cause);
    }
  }
}
