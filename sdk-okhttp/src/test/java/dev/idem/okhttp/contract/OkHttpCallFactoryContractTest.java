package dev.idem.okhttp.contract;

import dev.idem.testkit.contract.AdapterContract;
import dev.idem.testkit.contract.AdapterDriver;

/** The adapter contract through {@code IdemOkHttp.callFactory(client)}'s {@code enqueue}. */
class OkHttpCallFactoryContractTest extends AdapterContract {
  @Override
  protected AdapterDriver driver() {
    return new OkHttpDriver(OkHttpDriver.Style.CALL_FACTORY);
  }
}
