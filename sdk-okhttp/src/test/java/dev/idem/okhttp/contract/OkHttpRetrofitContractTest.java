package dev.idem.okhttp.contract;

import dev.idem.testkit.contract.AdapterContract;
import dev.idem.testkit.contract.AdapterDriver;

/** The adapter contract through OkHttp, style RETROFIT. */
class OkHttpRetrofitContractTest extends AdapterContract {
  @Override
  protected AdapterDriver driver() {
    return new OkHttpDriver(OkHttpDriver.Style.RETROFIT);
  }
}
