/**
 * One behavioural contract for every Idem HTTP adapter: {@link dev.idem.testkit.contract.AdapterContract}
 * runs the same scenarios against the reference server through an
 * {@link dev.idem.testkit.contract.AdapterDriver}, one per adapter and calling style (OkHttp
 * {@code execute} and {@code enqueue}, Retrofit, java.net.http {@code send} and {@code sendAsync}).
 * Needs JUnit 5 on the test class path.
 */
package dev.idem.testkit.contract;
