/**
 * The service-provider interface: what a journal or a transport implements, the records they
 * exchange with the executor, and the failures a transport reports. Those who write a journal, a
 * transport or an engine of their own use these types; an application that uses an adapter
 * (OkHttp, java.net.http) and a journal from {@code idem-persistence} meets only the snapshots:
 * an {@link dev.idem.core.Operation} carries a {@link dev.idem.core.spi.RequestSnapshot}, an
 * {@link dev.idem.core.Outcome} and a {@link dev.idem.core.Classifier} see a
 * {@link dev.idem.core.spi.ResponseSnapshot}. A transport throws
 * {@link dev.idem.core.spi.RequestNotSentException} when it knows nothing was sent; an attempt that
 * outlives the attempt timeout fails with {@link dev.idem.core.spi.AttemptTimeoutException} (the
 * executor's, or a transport's that enforces the timeout itself); both reach a classifier. An engine that drives retries with a {@link dev.idem.core.RetryPolicy} (the webhook processor
 * does) gets a {@link dev.idem.core.spi.RetryDecision}. The time hooks
 * ({@link dev.idem.core.spi.Sleeper}, {@link dev.idem.core.spi.Scheduler}) are here too: tests
 * inject virtual time through them ({@link dev.idem.core.testing.VirtualTime} implements both), and an app
 * rarely needs to name them.
 */
package dev.idem.core.spi;
