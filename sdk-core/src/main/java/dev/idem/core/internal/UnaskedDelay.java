package dev.idem.core.internal;

/**
 * A {@link dev.idem.core.DelayFunction} that holds something for its next call, to be told when
 * the policy decides without asking it (the attempts ran out), so that what it holds is dropped
 * rather than read by the next decision on the thread, which may be another operation's. The
 * resilience4j adapter's interval function is one: its classifier notes the exception of an
 * attempt that got no response, per thread, for the delay that follows.
 */
public interface UnaskedDelay {
  /** The policy stopped without asking for a delay; must not throw. */
  void notAsked();
}
