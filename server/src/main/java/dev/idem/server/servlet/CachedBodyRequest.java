package dev.idem.server.servlet;

import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.InputStreamReader;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.Enumeration;
import java.util.Map;

/**
 * The request as the handler behind the guard sees it: its body replayed from the bytes the guard
 * read, and, for a form-encoded POST, the parameters parsed from them. The container parses a
 * POST's form parameters only from a body nobody read (Tomcat, Jetty), and the guard read it, so
 * without this a handler's {@code getParameter} (Spring's {@code @RequestParam}) finds only the
 * query's. A form an earlier filter consumed (it read the parameters, as a CSRF check does) is no
 * body here: the request's parameters are the container's (or that filter's wrapper's) as they are.
 * Nor is a multipart body the container parsed for the guard: its parts and parameters are the
 * container's ({@code getParts()} passes through).
 *
 * <p>Not thread-safe beyond what a request is: the parameters are parsed once, on first use.
 */
class CachedBodyRequest extends HttpServletRequestWrapper {
  private final byte[] body;
  /** False when the body was consumed before the guard: length and parameters are the request's. */
  private final boolean holdsBody;
  /** The parameters with the body's, once asked for; null before, or if the body has none. */
  private Map<String, String[]> parameters;

  CachedBodyRequest(HttpServletRequest request, byte[] body) {
    super(request);
    // The guard fingerprinted the parameters of a form consumed before it: those are no body.
    this.holdsBody = request.getAttribute(FormBody.FINGERPRINTED_PARAMETERS) == null;
    this.body = holdsBody ? body : new byte[0];
  }

  @Override
  public ServletInputStream getInputStream() {
    ByteArrayInputStream in = new ByteArrayInputStream(body);
    return new ServletInputStream() {
      @Override
      public int read() {
        return in.read();
      }

      @Override
      public int read(byte[] b, int off, int len) {
        return in.read(b, off, len);
      }

      @Override
      public boolean isFinished() {
        return in.available() == 0;
      }

      @Override
      public boolean isReady() {
        return true;
      }

      @Override
      public void setReadListener(ReadListener listener) {
        throw new IllegalStateException("guarded requests are read synchronously");
      }
    };
  }

  @Override
  public BufferedReader getReader() {
    String enc = getCharacterEncoding();
    Charset cs = enc == null ? StandardCharsets.UTF_8 : Charset.forName(enc);
    return new BufferedReader(new InputStreamReader(getInputStream(), cs));
  }

  @Override
  public int getContentLength() {
    return holdsBody ? body.length : super.getContentLength();
  }

  @Override
  public long getContentLengthLong() {
    return holdsBody ? body.length : super.getContentLengthLong();
  }

  @Override
  public String getParameter(String name) {
    String[] values = getParameterMap().get(name);
    return values == null || values.length == 0 ? null : values[0];
  }

  @Override
  public Map<String, String[]> getParameterMap() {
    if (body.length == 0 || !FormBody.hasBodyParameters(this)) {
      // No form body here: what the container (or an earlier filter's wrapper) parsed is all.
      return super.getParameterMap();
    }
    if (parameters == null) {
      parameters = Collections.unmodifiableMap(
          FormBody.merge(super.getParameterMap(), FormBody.parse(body, FormBody.charset(this))));
    }
    return parameters;
  }

  @Override
  public Enumeration<String> getParameterNames() {
    return Collections.enumeration(getParameterMap().keySet());
  }

  @Override
  public String[] getParameterValues(String name) {
    String[] values = getParameterMap().get(name);
    return values == null ? null : values.clone();
  }
}
