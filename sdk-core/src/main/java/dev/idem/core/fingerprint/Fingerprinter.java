package dev.idem.core.fingerprint;

import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.internal.CanonicalJsonCheck;
import dev.idem.core.internal.JsonCanonicalizer;
import dev.idem.core.internal.SnapshotAccess;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * Computes the {@link Fingerprint} of a request: SHA-256 over the method, the raw path and query,
 * the configured semantic headers, and the body in canonical form. JSON bodies (any media type
 * ending in {@code json}) are canonicalized with RFC 8785, so key order, number spelling and
 * Unicode escapes do not change the fingerprint; other bodies, and JSON that does not parse, use
 * their raw bytes. Scheme, host and port are left out, so that a request re-sent to a fail-over
 * host of the same API keeps its fingerprint.
 *
 * <p>Semantic headers are those whose value changes what the server does (for example
 * {@code Stripe-Account} or an API version header). Transport noise such as tracing headers must
 * stay out, or every retry would look like a different request. The default is none.
 *
 * <p>Immutable and thread-safe.
 */
public final class Fingerprinter {
  private static final Fingerprinter DEFAULT = new Fingerprinter(Set.of());

  private final List<String> semanticHeaders;

  private Fingerprinter(Set<String> semanticHeaders) {
    TreeSet<String> sorted = new TreeSet<>();
    semanticHeaders.forEach(h -> sorted.add(h.toLowerCase(Locale.ROOT)));
    this.semanticHeaders = List.copyOf(sorted);
  }

  /**
   * A fingerprinter with no semantic headers.
   *
   * @return the shared default fingerprinter
   */
  public static Fingerprinter defaults() {
    return DEFAULT;
  }

  /**
   * A fingerprinter that also covers the named headers (case-insensitive).
   *
   * @param semanticHeaders headers whose values change the meaning of the request
   * @return a new immutable fingerprinter
   * @throws NullPointerException if {@code semanticHeaders} is null
   */
  public static Fingerprinter withSemanticHeaders(Set<String> semanticHeaders) {
    return new Fingerprinter(Objects.requireNonNull(semanticHeaders, "semanticHeaders"));
  }

  /**
   * Computes the fingerprint of a snapshot.
   *
   * @param request the request as it would be journaled
   * @return the SHA-256 fingerprint; snapshots that differ only in JSON spelling, scheme, host,
   *     port or non-semantic headers get the same one
   */
  public Fingerprint fingerprint(RequestSnapshot request) {
    MessageDigest sha = SHA256.get();
    sha.reset();
    update(sha, request.method());
    String path = request.uri().getRawPath();
    String query = request.uri().getRawQuery();
    update(sha, (path == null || path.isEmpty() ? "/" : path) + (query == null ? "" : "?" + query));
    for (String name : semanticHeaders) {
      update(sha, name);
      update(sha, String.join(",", request.headers().getOrDefault(name, List.of())));
    }
    // Read, not copied: canonicalizing makes a new array, and the digest only reads.
    byte[] body = SnapshotAccess.get().body(request);
    // Bodies a serializer wrote compactly with sorted keys are already canonical: checking that
    // costs one pass over the bytes, where canonicalizing parses and re-writes them. Both give the
    // same bytes to hash (see CanonicalJsonCheck).
    if (isJson(request) && !CanonicalJsonCheck.isCanonical(body)) {
      body = JsonCanonicalizer.canonicalize(body).orElse(body);
    }
    update(sha, body);
    return new Fingerprint(HexFormat.of().formatHex(sha.digest()));
  }

  private static boolean isJson(RequestSnapshot request) {
    String ct = SnapshotAccess.get().contentType(request);
    if (ct == null) {
      return false;
    }
    int semicolon = ct.indexOf(';');
    String type = (semicolon < 0 ? ct : ct.substring(0, semicolon)).trim();
    int n = type.length();
    // The media type without parameters ends in "/json" or "+json", in any case. Only ASCII
    // letters lower-case to these letters, so this is what toLowerCase(Locale.ROOT) then endsWith
    // said, without the copies.
    if (n < 5 || (type.charAt(n - 5) != '/' && type.charAt(n - 5) != '+')) {
      return false;
    }
    for (int k = 0; k < 4; k++) {
      char c = type.charAt(n - 4 + k);
      if ((c >= 'A' && c <= 'Z' ? (char) (c + 32) : c) != "json".charAt(k)) {
        return false;
      }
    }
    return true;
  }

  private static void update(MessageDigest sha, String s) {
    update(sha, s.getBytes(StandardCharsets.UTF_8));
  }

  // Length-prefixed, so that no two different field lists hash the same bytes.
  private static void update(MessageDigest sha, byte[] bytes) {
    int n = bytes.length;
    // The four bytes of the big-endian length one by one: the same bytes hashed, without an array.
    sha.update((byte) (n >>> 24));
    sha.update((byte) (n >>> 16));
    sha.update((byte) (n >>> 8));
    sha.update((byte) n);
    sha.update(bytes);
  }

  // MessageDigest.getInstance looks the provider up on every call; a digest per thread, reset
  // before each use, does not.
  private static final ThreadLocal<MessageDigest> SHA256 = ThreadLocal.withInitial(Fingerprinter::sha256);

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is not available in this JVM", e);
    }
  }
}
