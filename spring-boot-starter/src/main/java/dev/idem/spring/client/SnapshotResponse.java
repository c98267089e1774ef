package dev.idem.spring.client;

import dev.idem.core.spi.ResponseSnapshot;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.client.ClientHttpResponse;

/** A response this call did not receive itself (the journal's, or a concurrent call's), from its snapshot. */
final class SnapshotResponse implements ClientHttpResponse {
  private final ResponseSnapshot snapshot;
  private final HttpHeaders headers = new HttpHeaders();

  SnapshotResponse(ResponseSnapshot snapshot) {
    this.snapshot = snapshot;
    snapshot.headers().forEach(headers::addAll);
  }

  @Override
  public HttpStatusCode getStatusCode() {
    return HttpStatusCode.valueOf(snapshot.status());
  }

  @Override
  public String getStatusText() {
    HttpStatus known = HttpStatus.resolve(snapshot.status());
    return known == null ? "" : known.getReasonPhrase();
  }

  @Override
  public HttpHeaders getHeaders() {
    return headers;
  }

  @Override
  public InputStream getBody() {
    return new ByteArrayInputStream(snapshot.body());
  }

  @Override
  public void close() {}
}
