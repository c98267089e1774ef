package dev.idem.spring.client.contract;

import dev.idem.testkit.contract.AdapterContract;
import dev.idem.testkit.contract.AdapterDriver;

/** The adapter contract through WebClient and the exchange filter. */
class WebClientContractTest extends AdapterContract {
  @Override
  protected AdapterDriver driver() {
    return new WebClientDriver();
  }
}
