package dev.idem.jdbc.internal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * JSON text for the snapshot, attempt and response columns, written with Jackson's streaming
 * generator (no tree is built on the caller's thread) and read with its tree model (so the core
 * types need no annotations). Each document carries a format version {@code "v"}. Bodies are
 * base64; instants and durations are ISO-8601 text.
 *
 * <p>Thread-safe.
 */
public final class RecordCodec {
  private static final int FORMAT = 1;

  private final ObjectMapper mapper = new ObjectMapper();
  // The mapper shares this factory, so the lists appendAttempt rewrites are escaped the same way.
  private final JsonFactory json = mapper.getFactory().setCharacterEscapes(new SurrogateEscapes());
  private final int maxStoredResponseBody;
  private final String truncatedBodyHeader;

  /**
   * @param maxStoredResponseBody the largest response body kept; a larger one is replaced by a marker
   * @param truncatedBodyHeader the header that marks a dropped body, carrying its original length
   */
  public RecordCodec(int maxStoredResponseBody, String truncatedBodyHeader) {
    this.maxStoredResponseBody = maxStoredResponseBody;
    this.truncatedBodyHeader = truncatedBodyHeader;
  }

  // ---- request snapshot

  public String encodeRequest(RequestSnapshot r) {
    return write(256 + r.bodyLength() * 4 / 3, g -> {
      g.writeNumberField("v", FORMAT);
      g.writeStringField("method", r.method());
      g.writeStringField("uri", r.uri().toString());
      g.writeObjectFieldStart("headers");
      for (Map.Entry<String, List<String>> h : r.headers().entrySet()) {
        writeHeader(g, h, null);
      }
      g.writeEndObject();
      if (r.contentType().isPresent()) {
        g.writeStringField("contentType", r.contentType().get());
      }
      // Optional, so that journals written before it existed read as they were (no timeout), and a
      // reader that predates it ignores it: the format version stays 1.
      if (r.timeout().isPresent()) {
        g.writeStringField("timeout", r.timeout().get().toString());
      }
      // Jackson's default base64 is java.util.Base64's basic encoding (padded, no line feeds),
      // written straight into the output: no intermediate string to copy and scan for escapes.
      g.writeBinaryField("body", r.body());
    });
  }

  public RequestSnapshot decodeRequest(String json) throws CorruptRowException {
    JsonNode n = parse("request_json", json);
    checkFormat("request_json", n);
    try {
      RequestSnapshot.Builder b = RequestSnapshot.builder(text(n, "method", "request_json"),
          URI.create(text(n, "uri", "request_json")));
      forEachHeader(n.get("headers"), "request_json", b::header);
      JsonNode ct = n.get("contentType");
      b.body(base64(n, "body", "request_json"), ct == null || ct.isNull() ? null : ct.asText());
      JsonNode timeout = n.get("timeout");
      if (timeout != null && !timeout.isNull()) {
        b.timeout(IsoText.duration(text(n, "timeout", "request_json")));
      }
      return b.build();
    } catch (IllegalArgumentException | DateTimeParseException e) {
      throw new CorruptRowException("request_json: invalid request snapshot (" + e.getClass().getSimpleName() + ")");
    }
  }

  // ---- response snapshot

  /**
   * @param excluded header names (lower case) that are never stored
   */
  public String encodeResponse(ResponseSnapshot r, Set<String> excluded) {
    if (r == null) {
      return null;
    }
    byte[] body = r.body();
    boolean truncated = body.length > maxStoredResponseBody;
    String stored = truncated ? null : Base64.getEncoder().encodeToString(body);
    // The checksum is fed the values as they are written, in the same order: what
    // ResponseCheck.of reads back from the document.
    ResponseCheck.Sum sum = new ResponseCheck.Sum();
    return write(256 + (stored == null ? 0 : stored.length()), g -> {
      g.writeNumberField("v", FORMAT);
      g.writeNumberField("status", r.status());
      sum.status(Integer.toString(r.status()));
      g.writeObjectFieldStart("headers");
      for (Map.Entry<String, List<String>> h : r.headers().entrySet()) {
        if (!excluded.contains(h.getKey())) {
          writeHeader(g, h, sum);
        }
      }
      g.writeEndObject();
      if (truncated) {
        g.writeBooleanField("bodyTruncated", true);
        g.writeNumberField("bodyLength", body.length);
        sum.bodyLength(Integer.toString(body.length));
      } else {
        g.writeStringField("body", stored);
        sum.body(stored);
      }
      g.writeStringField(ResponseCheck.FIELD, sum.hex());
    });
  }

  public ResponseSnapshot decodeResponse(String json) throws CorruptRowException {
    if (json == null) {
      return null;
    }
    return responseFrom(parse("response_json", json));
  }

  private ResponseSnapshot responseFrom(JsonNode n) throws CorruptRowException {
    checkFormat("response_json", n);
    if (!ResponseCheck.matches(n)) {
      // A replay returns the stored response as the server's answer: never a changed one.
      throw new CorruptRowException("response_json: the stored response no longer matches its checksum (a stored"
          + " byte changed); it is never returned");
    }
    Map<String, List<String>> headers = new TreeMap<>();
    forEachHeader(n.get("headers"), "response_json",
        (k, v) -> headers.computeIfAbsent(k, x -> new ArrayList<>()).add(v));
    // A header sent with no value is kept as one, as the response had it.
    JsonNode stored = n.get("headers");
    if (stored != null && stored.isObject()) {
      stored.fieldNames().forEachRemaining(k -> headers.computeIfAbsent(k, x -> new ArrayList<>()));
    }
    byte[] body;
    if (n.path("bodyTruncated").asBoolean(false)) {
      headers.put(truncatedBodyHeader, List.of(Long.toString(n.path("bodyLength").asLong())));
      body = new byte[0];
    } else {
      body = base64(n, "body", "response_json");
    }
    JsonNode status = n.get("status");
    if (status == null || !status.canConvertToInt()) {
      throw new CorruptRowException("response_json: missing or invalid 'status'");
    }
    try {
      return new ResponseSnapshot(status.intValue(), headers, body);
    } catch (IllegalArgumentException e) {
      throw new CorruptRowException("response_json: invalid response (" + e.getClass().getSimpleName() + ")");
    }
  }

  // ---- attempts

  /** One attempt as an element of {@code attempts_json}, for an append in SQL ({@link OperationTable}). */
  public String encodeAttempt(AttemptRecord r) {
    return write(256, g -> {
      g.writeNumberField("number", r.number());
      g.writeNumberField("generation", r.generation());
      g.writeStringField("startedAt", IsoText.text(r.startedAt()));
      g.writeStringField("endedAt", IsoText.text(r.endedAt()));
      g.writeStringField("classification", r.classification().name());
      if (r.status() != null) {
        g.writeNumberField("status", r.status());
      }
      if (r.exceptionClass() != null) {
        g.writeStringField("exceptionClass", r.exceptionClass());
      }
      g.writeStringField("reason", r.reason());
      g.writeStringField("delay", r.delay().toString());
      g.writeStringField("decision", r.decision());
    });
  }

  /**
   * Appends one attempt to an encoded list without decoding the others: the list as Jackson
   * writes it back, with the attempt added as {@link OperationTable#appendAttemptAndTransition}
   * adds it in SQL.
   */
  public String appendAttempt(String attemptsJson, AttemptRecord attempt) throws CorruptRowException {
    JsonNode n = parse("attempts_json", attemptsJson);
    if (!n.isArray()) {
      throw new CorruptRowException("attempts_json: not a JSON array");
    }
    String list;
    try {
      // Not n.toString(): its own factory would write the surrogates the list escapes as themselves.
      list = mapper.writeValueAsString(n);
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException("writing to a string failed", e); // a tree read from text always writes
    }
    return list.substring(0, list.length() - 1) + (n.isEmpty() ? "" : ",") + encodeAttempt(attempt) + "]";
  }

  /** The attempts in an encoded list, as an immutable list. */
  public List<AttemptRecord> decodeAttempts(String json) throws CorruptRowException {
    JsonNode n = parse("attempts_json", json);
    if (!n.isArray()) {
      throw new CorruptRowException("attempts_json: not a JSON array");
    }
    List<AttemptRecord> result = new ArrayList<>(n.size());
    for (JsonNode a : n) {
      try {
        JsonNode status = a.get("status");
        JsonNode exceptionClass = a.get("exceptionClass");
        result.add(new AttemptRecord(
            a.path("number").asInt(0),
            a.path("generation").asLong(),
            IsoText.instant(text(a, "startedAt", "attempts_json")),
            IsoText.instant(text(a, "endedAt", "attempts_json")),
            Classification.valueOf(text(a, "classification", "attempts_json")),
            status == null || status.isNull() ? null : status.asInt(),
            exceptionClass == null || exceptionClass.isNull() ? null : exceptionClass.asText(),
            text(a, "reason", "attempts_json"),
            IsoText.duration(text(a, "delay", "attempts_json")),
            text(a, "decision", "attempts_json")));
      } catch (RuntimeException e) {
        throw new CorruptRowException("attempts_json: invalid attempt (" + e.getClass().getSimpleName() + ")");
      }
    }
    return List.copyOf(result);
  }

  // ---- whole rows

  /** Decodes a row, or explains (without values) why it cannot be. */
  public OperationRecord decode(RawRow row) throws CorruptRowException {
    RequestSnapshot request = decodeRequest(row.requestJson());
    if (row.requestCheck() != null && !RequestCheck.matches(row.requestCheck(), row.fingerprint(), row.requestJson())) {
      // Never send a changed payload under the original key: the server would replay the first
      // answer for a request that is not the one it answered.
      throw new CorruptRowException("request_json: the stored request no longer matches its checksum (a stored byte"
          + " changed); it is never sent");
    }
    return decode(row, request);
  }

  /**
   * Decodes a row whose request is already known, without reading its {@code request_json} (which
   * the row may not carry): for a write that returns the record it changed, where parsing the
   * request back from JSON was the largest part of the call's work. The caller vouches that
   * {@code request} is the row's (see {@link RequestMemo}); nothing returned by it is sent.
   */
  public OperationRecord decode(RawRow row, RequestSnapshot request) throws CorruptRowException {
    OperationState state = state(row.state());
    OperationId id = id(row);
    Fingerprint fingerprint = fingerprint(row);

    try {
      return new OperationRecord(id, row.reference(), fingerprint, request, state,
          row.owner(), row.generation(), Instants.fromNullable(row.leaseExpiresAt()),
          Instants.fromNullable(row.nextAttemptAt()), Instants.fromNanos(row.createdAt()),
          Instants.fromNanos(row.updatedAt()), decodeAttempts(row.attemptsJson()),
          decodeResponse(row.responseJson()), row.reason(), row.queued(),
          Instants.fromNullable(row.outcomeDeliveredAt()));
    } catch (IllegalArgumentException | NullPointerException e) {
      throw new CorruptRowException("row: inconsistent fields (" + e.getClass().getSimpleName() + ")");
    }
  }

  /** Parses a row's identity columns, or explains (without values) why they cannot be. */
  public static OperationId id(RawRow row) throws CorruptRowException {
    try {
      return new OperationId(row.scope(), row.operation(), IdempotencyKey.of(row.key()));
    } catch (IllegalArgumentException e) {
      throw new CorruptRowException("identity columns: invalid scope, operation or key");
    }
  }

  /** Parses a row's fingerprint column, or explains (without its value) why it cannot be. */
  public static Fingerprint fingerprint(RawRow row) throws CorruptRowException {
    try {
      return new Fingerprint(row.fingerprint());
    } catch (IllegalArgumentException | NullPointerException e) {
      throw new CorruptRowException("fingerprint: not 64 lower-case hex characters");
    }
  }

  /** Parses a state column, or explains why it cannot be. */
  public static OperationState state(String stored) throws CorruptRowException {
    if (stored != null) {
      for (OperationState s : OperationState.values()) {
        if (s.name().equals(stored)) {
          return s;
        }
      }
    }
    throw new CorruptRowException("state: unknown state '" + printable(stored) + "'");
  }

  /** A short, printable rendering of a stored state name for messages. */
  private static String printable(String s) {
    if (s == null) {
      return "null";
    }
    String cut = s.length() > 32 ? s.substring(0, 32) + "..." : s;
    return cut.replaceAll("[^A-Za-z0-9_.-]", "?");
  }

  // ---- helpers

  /** Writes one header as a field whose value is the list of its values, feeding {@code sum} if given. */
  private static void writeHeader(JsonGenerator g, Map.Entry<String, List<String>> h, ResponseCheck.Sum sum)
      throws IOException {
    g.writeArrayFieldStart(h.getKey());
    if (sum != null) {
      sum.header(h.getKey());
    }
    for (String v : h.getValue()) {
      g.writeString(v);
      if (sum != null) {
        sum.value(v);
      }
    }
    g.writeEndArray();
  }

  /** What writes a document's fields. */
  private interface Fields {
    void write(JsonGenerator g) throws IOException;
  }

  /**
   * One JSON object, written field by field with the streaming generator: the same text as the
   * tree model's {@code toString} (no whitespace), but with every surrogate escaped
   * ({@link SurrogateEscapes}), without building the tree.
   */
  private String write(int sizeHint, Fields fields) {
    StringWriter out = new StringWriter(sizeHint);
    try (JsonGenerator g = json.createGenerator(out)) {
      g.writeStartObject();
      fields.write(g);
      g.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException("writing to a string failed", e); // a StringWriter throws none
    }
    return out.toString();
  }

  private interface HeaderSink {
    void accept(String name, String value);
  }

  private static void forEachHeader(JsonNode h, String column, HeaderSink sink) throws CorruptRowException {
    if (h == null || h.isNull()) {
      return;
    }
    if (!h.isObject()) {
      throw new CorruptRowException(column + ": 'headers' is not an object");
    }
    Iterator<Map.Entry<String, JsonNode>> it = h.fields();
    while (it.hasNext()) {
      Map.Entry<String, JsonNode> e = it.next();
      if (!e.getValue().isArray()) {
        throw new CorruptRowException(column + ": header values are not a list");
      }
      for (JsonNode v : e.getValue()) {
        sink.accept(e.getKey(), v.asText());
      }
    }
  }

  private JsonNode parse(String column, String json) throws CorruptRowException {
    if (json == null) {
      throw new CorruptRowException(column + ": missing");
    }
    try {
      return mapper.readTree(json);
    } catch (JsonProcessingException e) {
      JsonLocation at = e.getLocation();
      throw new CorruptRowException(column + ": not valid JSON" + (at == null ? ""
          : " (at line " + at.getLineNr() + ", column " + at.getColumnNr() + ")"));
    }
  }

  private static void checkFormat(String column, JsonNode n) throws CorruptRowException {
    if (!n.isObject()) {
      throw new CorruptRowException(column + ": not a JSON object");
    }
    int v = n.path("v").asInt(-1);
    if (v != FORMAT) {
      throw new CorruptRowException(column + ": unknown format version " + v);
    }
  }

  private static String text(JsonNode n, String field, String column) throws CorruptRowException {
    JsonNode v = n.get(field);
    if (v == null || !v.isTextual()) {
      throw new CorruptRowException(column + ": missing or invalid '" + field + "'");
    }
    return v.asText();
  }

  private static byte[] base64(JsonNode n, String field, String column) throws CorruptRowException {
    try {
      return Base64.getDecoder().decode(text(n, field, column));
    } catch (IllegalArgumentException e) {
      throw new CorruptRowException(column + ": '" + field + "' is not base64");
    }
  }
}
