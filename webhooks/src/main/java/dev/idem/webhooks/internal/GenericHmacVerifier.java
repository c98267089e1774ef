package dev.idem.webhooks.internal;

import dev.idem.webhooks.GenericHmac;
import dev.idem.webhooks.WebhookRejectedException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** A {@link GenericHmac} description at work. */
public final class GenericHmacVerifier implements Verifier {
  private final GenericHmac spec;
  private final String before;
  private final String after;

  public GenericHmacVerifier(GenericHmac spec) {
    this.spec = spec;
    int at = spec.signedContent().indexOf("{body}");
    this.before = spec.signedContent().substring(0, at);
    this.after = spec.signedContent().substring(at + "{body}".length());
  }

  @Override
  public String name() {
    return "hmac";
  }

  /**
   * The template signs the timestamp, and the id is signed too ({@link #signsEventId}). GenericHmac
   * refuses a timestamp header the template does not sign; the template is still what says so.
   */
  @Override
  public boolean signsTimestampAndId() {
    return spec.signedContent().contains("{timestamp}") && signsEventId();
  }

  /**
   * The id is in the template, or read from the signed body when there is no id header. An id
   * header outside the template is not signed: a replay may carry another id.
   */
  @Override
  public boolean signsEventId() {
    return spec.idHeader() == null || spec.signedContent().contains("{id}");
  }

  @Override
  public MacKey key(String secret) {
    String s = secret.startsWith(spec.secretPrefix()) ? secret.substring(spec.secretPrefix().length()) : secret;
    byte[] key = switch (spec.secretEncoding()) {
      case UTF8 -> s.getBytes(StandardCharsets.UTF_8);
      case BASE64 -> Hmac.fromBase64(s);
      case HEX -> Hmac.fromHex(s.toLowerCase(java.util.Locale.ROOT));
    };
    if (key == null || key.length == 0) {
      throw new IllegalArgumentException("the secret is not " + spec.secretEncoding());
    }
    return new MacKey(spec.algorithm(), key);
  }

  @Override
  public SchemeResult verify(Headers headers, byte[] body, List<MacKey> keys, long now, long tolerance)
      throws WebhookRejectedException {
    String sigs = headers.require(spec.signatureHeader());
    String id = spec.idHeader() == null ? null : headers.require(spec.idHeader());
    String ts = spec.timestampHeader() == null ? null : headers.require(spec.timestampHeader());
    Long timestamp = ts == null ? null : Verifier.seconds(spec.timestampHeader(), ts);
    byte[] pre = fill(before, id, ts);
    byte[] post = fill(after, id, ts);
    List<byte[]> given = new ArrayList<>();
    for (String v : signatures(sigs, spec.signaturePrefix())) {
      given.add(spec.signatureEncoding() == GenericHmac.Encoding.HEX
          ? Hmac.fromHex(v.toLowerCase(java.util.Locale.ROOT)) : Hmac.fromBase64(v));
    }
    List<byte[]> matched = Verifier.match("HMAC", keys, !signsEventId(), given, pre, body, post);
    if (timestamp != null) {
      Verifier.checkWindow(timestamp, now, tolerance);
    }
    return new SchemeResult(id, spec.typeHeader() == null ? null : headers.first(spec.typeHeader()), timestamp,
        matched);
  }

  /**
   * The signatures in the header: each follows the prefix at the start of a piece, pieces being
   * separated by spaces or commas, and runs to the next space or comma (neither occurs in hex or
   * base64). The prefix is matched before the piece is cut at a comma, so that a prefix holding one
   * (Svix's {@code v1,} under {@code svix-signature}) is found whole: splitting on commas first cut
   * every {@code v1,<base64>} in two, and no genuine delivery verified. A piece that does not start
   * with the prefix ({@code t=...} beside {@code v1=...}) is skipped, as before.
   */
  static List<String> signatures(String header, String prefix) {
    List<String> found = new ArrayList<>();
    for (String piece : header.split(" ")) {
      int i = 0;
      while (i < piece.length()) {
        int end;
        if (piece.startsWith(prefix, i)) {
          int from = i + prefix.length();
          end = piece.indexOf(',', from);
          end = end < 0 ? piece.length() : end;
          if (end > from) {
            found.add(piece.substring(from, end));
          }
        } else {
          end = piece.indexOf(',', i);
          end = end < 0 ? piece.length() : end;
        }
        i = end + 1;
      }
    }
    return found;
  }

  /** One pass over the template, so that an id containing "{timestamp}" is not substituted again. */
  private static byte[] fill(String template, String id, String ts) {
    StringBuilder sb = new StringBuilder();
    int i = 0;
    while (i < template.length()) {
      if (id != null && template.startsWith("{id}", i)) {
        sb.append(id);
        i += 4;
      } else if (ts != null && template.startsWith("{timestamp}", i)) {
        sb.append(ts);
        i += 11;
      } else {
        sb.append(template.charAt(i++));
      }
    }
    return sb.toString().getBytes(StandardCharsets.UTF_8);
  }
}
