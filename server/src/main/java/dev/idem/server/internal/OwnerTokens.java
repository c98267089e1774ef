package dev.idem.server.internal;

import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;

/**
 * Names a guard's claims: each claim gets an owner token of its own, which the store checks
 * (with the generation) before it renews, completes or releases the claim. Tokens are unique to
 * one guard and one claim; a named instance's start with its id and a {@code /}, the prefix on
 * which the store ends the claims an earlier run of that instance left in flight.
 *
 * <p>Thread-safe.
 */
public final class OwnerTokens {
  // No '/' in an id: "<id>/" then prefixes this instance's tokens and no other instance's.
  private static final Pattern INSTANCE_ID = Pattern.compile("[A-Za-z0-9._:-]{1,100}");

  private final String instance;
  private final AtomicLong claims = new AtomicLong();

  /**
   * @param instanceId the instance's stable identity, checked by {@link #isValidInstanceId}; null
   *     for a random identity per guard
   */
  public OwnerTokens(String instanceId) {
    // A named instance's owner tokens are <id>/<run>/<n>: the run part keeps a restarted instance's
    // tokens apart from its dead run's, and <id>/ is what the next run ends at start.
    String run = UUID.randomUUID().toString().substring(0, 8);
    this.instance = instanceId == null ? UUID.randomUUID().toString() : instanceId + "/" + run;
  }

  /**
   * @param id a proposed instance identity
   * @return whether it is 1 to 100 letters, digits, {@code . _ : -}
   */
  public static boolean isValidInstanceId(String id) {
    return INSTANCE_ID.matcher(id).matches();
  }

  /** @return the owner token of a new claim */
  public String next() {
    return instance + "/" + claims.incrementAndGet();
  }
}
