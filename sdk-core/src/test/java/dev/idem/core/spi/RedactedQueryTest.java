package dev.idem.core.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/**
 * {@link RequestSnapshot#redactedQuery}: a stored query as the CLI's {@code journal show} prints it, by the
 * executor's own rule, names kept, values blanked.
 */
class RedactedQueryTest {
  @Test
  void ordinaryParametersPrintAsWritten() {
    String q = "currency=EUR&sp=w&sv=2024-05-04&q=caf%C3%A9+au+lait&empty=&flag&to=a%40b.example";
    assertEquals(q, RequestSnapshot.redactedQuery(q));
  }

  @Test
  void aParameterTheQueryRuleNamesIsBlankedInAnyCase() {
    assertEquals("currency=EUR&key=redacted&SIG=redacted&access_token=redacted&x-api-key=redacted",
        RequestSnapshot.redactedQuery("currency=EUR&key=AIza1&SIG=s%3D&access_token=t&x-api-key=k"));
  }

  @Test
  void aSemicolonPieceAndAnHtmlCopiedNameAreJudgedAsParametersOfTheirOwn() {
    assertEquals("a=1;access_token=redacted&amp;sig=redacted", RequestSnapshot.redactedQuery("a=1;access_token=t&amp;sig=s"));
  }

  @Test
  void aValueHoldingAUrlWithACredentialIsBlankedWholeAtAnyOfItsEncodings() {
    assertEquals("next=redacted&lang=en", RequestSnapshot.redactedQuery("next=https://app.example/done?code=1%26token%3Dt&lang=en"));
    assertEquals("next=redacted", RequestSnapshot.redactedQuery("next=https%3A%2F%2Fapp.example%2Fdone%3Faccess_token%3Dt"));
    assertEquals("next=redacted", RequestSnapshot.redactedQuery("next=https%253A%252F%252Fapp.example%252F%253Fsig%253Ds"));
    assertEquals("next=redacted", RequestSnapshot.redactedQuery("next=https%3A%2F%2Fsvc%3Apw%40app.example%2F"));
    assertEquals("next=redacted", RequestSnapshot.redactedQuery("next=https%3A%2F%2Fapp.example%2Fcart%3Bjsessionid%3Ds"));
  }

  @Test
  void aReturnUrlWithoutACredentialIsKept() {
    String q = "next=https%3A%2F%2Fapp.example%2Fdone%3Fsession_id%3D%7BCHECKOUT_SESSION_ID%7D%26author%3Dx";
    assertEquals(q, RequestSnapshot.redactedQuery(q));
  }

  @Test
  void invalidPercentEncodingIsReadAsWritten() {
    assertEquals("a=%zz&key=redacted", RequestSnapshot.redactedQuery("a=%zz&key=%zz"));
  }
}
