/**
 * One behavioural contract for every Idem HTTP adapter: {@link dev.idem.testkit.contract.AdapterContract}
 * runs the same scenarios against the reference server through an
 * {@link dev.idem.testkit.contract.AdapterDriver}, one per adapter and calling style (OkHttp
 * {@code execute} and {@code enqueue}, Retrofit, java.net.http {@code send} and {@code sendAsync}).
 * {@link dev.idem.testkit.contract.JournalContract} does the same for {@link dev.idem.core.spi.Journal}
 * implementations: extend it once per journal. Both need JUnit 5 on the test class path.
 */
package dev.idem.testkit.contract;
