/**
 * The service-provider interface: what a journal, a transport or an adapter implements, and the
 * records they exchange with the executor. An application that uses an adapter (OkHttp,
 * java.net.http) and a journal from {@code idem-persistence} never needs to name these types;
 * they are for those who write a journal, a transport or an adapter of their own. The time hooks
 * ({@link dev.idem.core.spi.Sleeper}, {@link dev.idem.core.spi.Scheduler}) are here too: tests
 * inject virtual time through them (the test kit's {@code VirtualTime} implements both), and an app
 * rarely needs to name them.
 */
package dev.idem.core.spi;
