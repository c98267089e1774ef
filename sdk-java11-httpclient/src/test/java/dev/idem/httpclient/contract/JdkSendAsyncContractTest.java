package dev.idem.httpclient.contract;

import dev.idem.testkit.contract.AdapterContract;
import dev.idem.testkit.contract.AdapterDriver;

/** The adapter contract through java.net.http, {@code sendAsync}. */
class JdkSendAsyncContractTest extends AdapterContract {
  @Override
  protected AdapterDriver driver() {
    return new JdkDriver(true);
  }
}
