package dev.idem.server.internal;

/**
 * Which Errors are the JVM's own failure rather than the failure of the code that threw them, the
 * rule sdk-core's {@code AttemptLoop.isFatal} states: every VirtualMachineError but
 * StackOverflowError. Such an Error (OutOfMemoryError, an
 * InternalError) means nothing more should run on its account, so it is passed on, never logged
 * and ignored. Any other Error is the failure of the code that threw it, as a RuntimeException
 * would be: a LinkageError (a metrics binder built against another Micrometer throws
 * NoSuchMethodError), an AssertionError, and a StackOverflowError, whose stack has unwound by the
 * time it is caught. Kept here, not shared with sdk-core: no module uses another's internals.
 */
public final class FatalErrors {
  private FatalErrors() {}

  /**
   * @param e what was caught
   * @return true if {@code e} is a VirtualMachineError other than StackOverflowError
   */
  public static boolean isFatal(Throwable e) {
    return e instanceof VirtualMachineError && !(e instanceof StackOverflowError);
  }
}
