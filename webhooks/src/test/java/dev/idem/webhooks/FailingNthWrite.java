package dev.idem.webhooks;

import dev.idem.core.IdempotencyException;
import dev.idem.core.JournalException;
import dev.idem.storage.Durability;
import dev.idem.storage.SqlWork;
import dev.idem.storage.Store;
import java.util.concurrent.atomic.AtomicInteger;

/** A store whose n-th write from when {@code countdown} is set to n fails, before it runs, as a lost connection. */
final class FailingNthWrite extends ForwardingStore {
  private final AtomicInteger countdown;

  FailingNthWrite(Store store, AtomicInteger countdown) {
    super(store);
    this.countdown = countdown;
  }

  @Override
  public <T> T write(Durability durability, Object row, SqlWork<T> work) throws IdempotencyException {
    if (countdown.get() > 0 && countdown.decrementAndGet() == 0) {
      throw new JournalException("connection to the inbox lost (test)", null);
    }
    return store.write(durability, row, work);
  }
}
