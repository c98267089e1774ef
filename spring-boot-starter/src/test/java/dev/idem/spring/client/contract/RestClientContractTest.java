package dev.idem.spring.client.contract;

import dev.idem.testkit.contract.AdapterContract;
import dev.idem.testkit.contract.AdapterDriver;

/** The adapter contract through RestClient and the interceptor. */
class RestClientContractTest extends AdapterContract {
  @Override
  protected AdapterDriver driver() {
    return new RestClientDriver();
  }
}
