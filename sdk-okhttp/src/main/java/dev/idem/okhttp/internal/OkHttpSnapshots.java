package dev.idem.okhttp.internal;

import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.ResponseSnapshot;
import java.io.IOException;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import okhttp3.Headers;
import okhttp3.MediaType;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.ResponseBody;
import okio.Buffer;

/** Conversions between OkHttp's requests and responses and the core's snapshots. Stateless. */
public final class OkHttpSnapshots {
  private OkHttpSnapshots() {}

  /** Reads a (replayable) body into memory, once. */
  public static byte[] readBody(RequestBody body) throws IOException {
    Buffer buffer = new Buffer();
    body.writeTo(buffer);
    return buffer.readByteArray();
  }

  /**
   * Snapshots a request whose body was read into {@code body}, leaving out the key header (the
   * transport sets it on every attempt from the journaled key, so it is not part of the request).
   */
  public static RequestSnapshot snapshot(Request request, byte[] body, String keyHeader) {
    RequestSnapshot.Builder b = RequestSnapshot.builder(request.method(), request.url().uri());
    Headers headers = request.headers();
    for (int i = 0; i < headers.size(); i++) {
      if (!headers.name(i).equalsIgnoreCase(keyHeader)) {
        b.header(headers.name(i), headers.value(i));
      }
    }
    RequestBody rb = request.body();
    if (body != null) {
      MediaType type = rb == null ? null : rb.contentType();
      b.body(body, type == null ? null : type.toString());
    }
    return b.build();
  }

  /**
   * Snapshots a response, keeping its body only up to {@link ResponseSnapshot#MAX_CAPTURED_BODY}
   * bytes (a longer one is marked {@link ResponseSnapshot#BODY_NOT_KEPT_HEADER} and dropped), and
   * closes the response.
   */
  public static ResponseSnapshot buffer(Response response) throws IOException {
    return ResponseCapture.captureAndClose(response);
  }

  /**
   * Rebuilds a request from a journaled snapshot, for a resume. Secret headers are not in it: the
   * app's own interceptors add them on the way out.
   */
  public static Request toRequest(RequestSnapshot snapshot) {
    Request.Builder b = new Request.Builder().url(snapshot.uri().toString());
    snapshot.headers().forEach((name, values) -> values.forEach(v -> b.addHeader(name, v)));
    RequestBody body = null;
    if (snapshot.bodyLength() > 0 || needsBody(snapshot.method())) {
      MediaType type = snapshot.contentType().map(MediaType::parse).orElse(null);
      body = RequestBody.create(snapshot.body(), type);
    }
    return b.method(snapshot.method(), body).build();
  }

  // OkHttp refuses these methods without a body; an empty one is what the app sent.
  private static boolean needsBody(String method) {
    return switch (method.toUpperCase(Locale.ROOT)) {
      case "POST", "PUT", "PATCH", "PROPPATCH", "REPORT" -> true;
      default -> false;
    };
  }

  /**
   * Rebuilds a response from a snapshot, for a result this call did not receive itself (it came
   * from the journal, or from a concurrent call with the same key).
   */
  public static Response toResponse(ResponseSnapshot snapshot, Request request) {
    Headers.Builder headers = new Headers.Builder();
    snapshot.headers().forEach((name, values) -> values.forEach(v -> headers.addUnsafeNonAscii(name, v)));
    MediaType type = snapshot.header("Content-Type").map(MediaType::parse).orElse(null);
    return new Response.Builder()
        .request(request)
        .protocol(Protocol.HTTP_1_1)
        .code(snapshot.status())
        .message("")
        .headers(headers.build())
        .body(ResponseBody.create(snapshot.body(), type))
        .build();
  }

  /** The same response with an in-memory body, keeping protocol, handshake, timings and headers. */
  public static Response withBody(Response raw, Request request, byte[] body) {
    String contentType = raw.header("Content-Type");
    MediaType type = contentType == null ? null : MediaType.parse(contentType);
    return raw.newBuilder().request(request).body(ResponseBody.create(body, type)).build();
  }
}
