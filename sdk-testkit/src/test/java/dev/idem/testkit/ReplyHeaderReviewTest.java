package dev.idem.testkit;

import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/**
 * Review: {@link Reply#withHeader} takes any name and value. A handler that adds a header the
 * server cannot send (a space in the name, a line break in the value) is not told so where it made
 * the mistake: the effect runs and its result is stored, then MockWebServer fails to write the
 * response and the client under test just hangs until its read timeout ("SocketTimeoutException:
 * timeout"), while a retry gets the stored replay as if nothing had been wrong. {@link Fault#withHeader}
 * refuses the same input at once with an IllegalArgumentException; Reply should too.
 */
class ReplyHeaderReviewTest {
  @Test
  void aHeaderNameTheServerCannotSendIsRefusedWhenTheReplyIsBuilt() {
    Reply reply = Reply.json(201, "{}");
    assertThrows(IllegalArgumentException.class, () -> reply.withHeader("Bad Name", "x"),
        "a space in a header name: the client would time out instead of getting this reply");
    assertThrows(IllegalArgumentException.class, () -> reply.withHeader("", "x"), "an empty header name");
  }

  @Test
  void aHeaderValueWithALineBreakIsRefusedWhenTheReplyIsBuilt() {
    Reply reply = Reply.json(201, "{}");
    assertThrows(IllegalArgumentException.class, () -> reply.withHeader("Location", "/orders/1\r\nX-Evil: 1"),
        "CR LF in a header value: the client would time out instead of getting this reply");
  }

  @Test
  void aContentTypeWithALineBreakIsRefusedWhenTheReplyIsBuilt() {
    assertThrows(IllegalArgumentException.class,
        () -> Reply.of(201, "application/json\nX-Evil: 1", new byte[0]),
        "CR LF in the content type: the client would time out instead of getting this reply");
  }
}
