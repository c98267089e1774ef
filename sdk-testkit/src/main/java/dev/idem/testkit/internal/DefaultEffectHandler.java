package dev.idem.testkit.internal;

import dev.idem.testkit.EffectHandler;
import dev.idem.testkit.EffectRequest;
import dev.idem.testkit.Reply;

/**
 * Creates an "order" per effect: {@code 201 {"id":"ord_<n>","effect":<n>,"key":"..."}}. The id comes
 * from the effect number, so a client that got two different ids for one operation has proof of a
 * double effect in the body alone.
 */
public final class DefaultEffectHandler implements EffectHandler {
  @Override
  public Reply execute(EffectRequest request) {
    long n = request.effectNumber();
    String key = request.key() == null ? "null" : Json.quote(request.key());
    return Reply.json(201, "{\"id\":\"ord_" + n + "\",\"effect\":" + n + ",\"key\":" + key + "}");
  }
}
