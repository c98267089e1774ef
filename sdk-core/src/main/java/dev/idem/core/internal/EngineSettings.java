package dev.idem.core.internal;

import dev.idem.core.Classifier;
import dev.idem.core.Journal;
import java.time.Clock;
import java.time.Duration;
import java.util.function.DoubleSupplier;

/**
 * What every {@link AttemptLoop} of one executor shares.
 *
 * @param journal where operations live
 * @param classifier how attempts are classified
 * @param clock the time source
 * @param random uniform values in [0, 1) for jitter
 * @param owner this executor's owner name for leases
 * @param leaseFor how long a claim lasts
 * @param replayHeader the response header that marks a server-side replay
 */
public record EngineSettings(Journal journal, Classifier classifier, Clock clock, DoubleSupplier random, String owner,
    Duration leaseFor, String replayHeader) {}
