package dev.idem.core.internal;

import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;

/**
 * Reads of a snapshot's fields without the copies and wrappers the public accessors make for the
 * app ({@link RequestSnapshot#body()} and {@link ResponseSnapshot#body()} copy the array,
 * {@link RequestSnapshot#contentType()} wraps it in an {@code Optional}): for sdk-core's own readers
 * that run on every keyed call (the fingerprint, the secret rule's form check, the in-memory
 * journal's packing) and only read. A call made each copy and wrapper once per such reader, on top
 * of the copies the snapshots themselves must make. {@code RequestSnapshot} installs the one
 * implementation when its class is initialized, as {@link ExecutorAccess} is installed.
 *
 * <p>The arrays returned are the snapshots' own: callers must never write to them or hand them on.
 * Thread-safe.
 */
public abstract class SnapshotAccess {
  private static volatile SnapshotAccess installed;

  protected SnapshotAccess() {}

  /**
   * Installs the implementation; called once, by {@code RequestSnapshot}.
   *
   * @throws IllegalStateException if one is installed already
   */
  public static synchronized void install(SnapshotAccess bodies) {
    if (installed != null) {
      throw new IllegalStateException("SnapshotAccess is installed by RequestSnapshot only, once");
    }
    installed = bodies;
  }

  /** The implementation {@code RequestSnapshot} installed, initializing that class if need be. */
  public static SnapshotAccess get() {
    SnapshotAccess bodies = installed;
    if (bodies != null) {
      return bodies;
    }
    // A caller holding only a ResponseSnapshot may come before anything initialized RequestSnapshot.
    try {
      Class.forName(RequestSnapshot.class.getName(), true, RequestSnapshot.class.getClassLoader());
    } catch (ClassNotFoundException e) {
      throw new IllegalStateException(e);
    }
    return installed;
  }

  /** {@code request}'s body, not copied: read it, never write it. */
  public abstract byte[] body(RequestSnapshot request);

  /** {@code response}'s body, not copied: read it, never write it. */
  public abstract byte[] body(ResponseSnapshot response);

  /** {@code request}'s media type, or null if it has none. */
  public abstract String contentType(RequestSnapshot request);
}
