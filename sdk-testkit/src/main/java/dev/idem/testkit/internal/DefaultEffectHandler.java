package dev.idem.testkit.internal;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
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
    return Reply.json(201, JsonNodeFactory.instance.objectNode().put("id", "ord_" + n).put("effect", n)
        .put("key", request.key()).toString());
  }
}
