package dev.idem.webhooks;

import dev.idem.core.IdempotencyException;
import dev.idem.storage.Durability;
import dev.idem.storage.SqlWork;
import dev.idem.storage.Store;

/**
 * A store that hands every call to another: the tests' wrappers override only the call they
 * stop or fail ({@link #write}, {@link #read}).
 */
abstract class ForwardingStore implements Store {
  protected final Store store;

  ForwardingStore(Store store) {
    this.store = store;
  }

  @Override
  public <T> T read(Object row, SqlWork<T> work) throws IdempotencyException {
    return store.read(row, work);
  }

  @Override
  public <T> T write(Durability durability, Object row, SqlWork<T> work) throws IdempotencyException {
    return store.write(durability, row, work);
  }

  @Override
  public boolean broken() {
    return store.broken();
  }

  @Override
  public boolean readOnly() {
    return store.readOnly();
  }

  @Override
  public void flush() throws IdempotencyException {
    store.flush();
  }

  @Override
  public void close(String how) throws IdempotencyException {
    store.close(how);
  }
}
