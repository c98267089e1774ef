package dev.idem.spring.internal;

import dev.idem.server.CapturedResponse;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The response as a transactional handler writes it: status, headers and body held in memory and
 * nothing sent, since the handler's answer goes out only after its transaction committed (the
 * guard answers 503 instead if the commit fails). {@code sendError} and {@code sendRedirect} (also
 * Servlet 6.1's {@code sendRedirect} with a status or {@code clearBuffer}) are held as a status
 * (and {@code Location}), without a container error page. They end the answer as the container
 * does: the body written before is dropped ({@code sendError}, and a redirect unless
 * {@code clearBuffer} is false), writes after are dropped, and the response reads as committed:
 * later status, header, cookie and content type changes are ignored, and {@code reset},
 * {@code resetBuffer}, {@code setBufferSize} and {@code setTrailerFields} throw
 * {@link IllegalStateException}, as the container's.
 *
 * <p>The body is held up to a limit ({@code idem.server.max-buffered-body-bytes}). A write past it
 * fails with {@link TooLarge} and leaves the response {@link #overflowed()} for good, whatever the
 * handler then does (a {@code PrintWriter} swallows the failure): the answer can no longer go out
 * whole after the commit, so the run must roll back rather than commit writes with a cut answer.
 * Nothing past the limit is held. Not thread-safe: one request's.
 */
final class BufferedResponse extends HttpServletResponseWrapper {
  /** A write past the limit: the answer is too large to hold until the commit. */
  static final class TooLarge extends IOException {
    TooLarge(long limit) {
      super("the transactional handler's answer is over the " + limit + " bytes held until its transaction"
          + " commits (idem.server.max-buffered-body-bytes)");
    }
  }

  private final ByteArrayOutputStream body = new ByteArrayOutputStream();
  private final Map<String, List<String>> headers = new LinkedHashMap<>();
  private final long limit;
  private boolean overflowed;
  /**
   * Whether sendRedirect or sendError ended the answer. The container stops taking body at that
   * point (Tomcat suspends the response) and ignores later status and header changes (its facade
   * reads as committed); holding either would store and replay an answer that the handler's client
   * never gets without the guard.
   */
  private boolean ended;
  private int status = 200;
  private String characterEncoding;
  private ServletOutputStream stream;
  private PrintWriter writer;

  /**
   * @param response the container's response, written only by the caller, after the commit
   * @param limit the most body bytes held, at least 1
   */
  BufferedResponse(HttpServletResponse response, long limit) {
    super(response);
    this.limit = limit;
  }

  /**
   * Whether the handler wrote past the limit: its answer was not held whole. Flushes the writer
   * first: its encoder keeps up to 8 KiB of text that has not reached the body yet (a handler
   * rarely flushes; the container would, at the end), and the write that overflows may be in it.
   */
  boolean overflowed() {
    flushWriter();
    return overflowed;
  }

  private void flushWriter() {
    if (writer != null) {
      // A PrintWriter swallows the TooLarge; room() has noted it.
      writer.flush();
    }
  }

  /** The most body bytes held. */
  long limit() {
    return limit;
  }

  private void room(int len) throws TooLarge {
    if (overflowed || body.size() + (long) len > limit) {
      overflowed = true;
      throw new TooLarge(limit);
    }
  }

  /** What the handler answered. */
  CapturedResponse captured() {
    flushWriter();
    return new CapturedResponse(status, headers, body.toByteArray());
  }

  @Override
  public ServletOutputStream getOutputStream() {
    if (stream == null) {
      stream = new ServletOutputStream() {
        @Override
        public void write(int b) throws IOException {
          if (ended) {
            return;
          }
          room(1);
          body.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
          if (ended) {
            return;
          }
          room(len);
          body.write(b, off, len);
        }

        @Override
        public boolean isReady() {
          return true;
        }

        @Override
        public void setWriteListener(WriteListener listener) {
          throw new IllegalStateException("guarded responses are written synchronously");
        }
      };
    }
    return stream;
  }

  @Override
  public PrintWriter getWriter() {
    if (writer == null) {
      String enc = getCharacterEncoding();
      Charset cs = enc == null ? StandardCharsets.ISO_8859_1 : Charset.forName(enc);
      writer = new PrintWriter(new OutputStreamWriter(getOutputStream(), cs));
    }
    return writer;
  }

  private void put(String name, String value, boolean add) {
    if (ended) {
      return;
    }
    String existing = headers.keySet().stream().filter(n -> n.equalsIgnoreCase(name)).findFirst().orElse(name);
    List<String> values = headers.computeIfAbsent(existing, n -> new ArrayList<>());
    if (!add) {
      values.clear();
    }
    values.add(value);
  }

  @Override
  public void setHeader(String name, String value) {
    if (ended) {
      return;
    }
    if (value == null) {
      headers.keySet().removeIf(n -> n.equalsIgnoreCase(name));
    } else {
      put(name, value, false);
    }
  }

  @Override
  public void addHeader(String name, String value) {
    put(name, value, true);
  }

  @Override
  public void setIntHeader(String name, int value) {
    setHeader(name, Integer.toString(value));
  }

  @Override
  public void addIntHeader(String name, int value) {
    addHeader(name, Integer.toString(value));
  }

  @Override
  public void setDateHeader(String name, long date) {
    setHeader(name, java.time.format.DateTimeFormatter.RFC_1123_DATE_TIME.format(
        java.time.Instant.ofEpochMilli(date).atZone(java.time.ZoneOffset.UTC)));
  }

  @Override
  public void addDateHeader(String name, long date) {
    addHeader(name, java.time.format.DateTimeFormatter.RFC_1123_DATE_TIME.format(
        java.time.Instant.ofEpochMilli(date).atZone(java.time.ZoneOffset.UTC)));
  }

  @Override
  public boolean containsHeader(String name) {
    return headers.keySet().stream().anyMatch(n -> n.equalsIgnoreCase(name));
  }

  @Override
  public String getHeader(String name) {
    Collection<String> v = getHeaders(name);
    return v.isEmpty() ? null : v.iterator().next();
  }

  @Override
  public Collection<String> getHeaders(String name) {
    List<String> out = new ArrayList<>();
    headers.forEach((n, v) -> {
      if (n.equalsIgnoreCase(name)) {
        out.addAll(v);
      }
    });
    return out;
  }

  @Override
  public Collection<String> getHeaderNames() {
    return new ArrayList<>(headers.keySet());
  }

  @Override
  public void addCookie(Cookie cookie) {
    if (ended) {
      return;
    }
    StringBuilder sb = new StringBuilder(cookie.getName()).append('=').append(cookie.getValue() == null ? ""
        : cookie.getValue());
    if (cookie.getPath() != null) {
      sb.append("; Path=").append(cookie.getPath());
    }
    if (cookie.getMaxAge() >= 0) {
      sb.append("; Max-Age=").append(cookie.getMaxAge());
    }
    if (cookie.getSecure()) {
      sb.append("; Secure");
    }
    if (cookie.isHttpOnly()) {
      sb.append("; HttpOnly");
    }
    addHeader("Set-Cookie", sb.toString());
  }

  @Override
  public void setContentType(String type) {
    if (ended) {
      return;
    }
    if (type == null) {
      setHeader("Content-Type", null);
      return;
    }
    String t = type;
    if (characterEncoding != null && t.startsWith("text/") && !t.toLowerCase(Locale.ROOT).contains("charset")) {
      t = t + ";charset=" + characterEncoding;
    }
    int i = t.toLowerCase(Locale.ROOT).indexOf("charset=");
    if (i >= 0) {
      characterEncoding = t.substring(i + "charset=".length()).trim();
    }
    setHeader("Content-Type", t);
  }

  @Override
  public String getContentType() {
    return getHeader("Content-Type");
  }

  @Override
  public void setCharacterEncoding(String charset) {
    if (ended) {
      return;
    }
    characterEncoding = charset;
    String type = getContentType();
    if (type != null && !type.toLowerCase(Locale.ROOT).contains("charset")) {
      setHeader("Content-Type", type + ";charset=" + charset);
    }
  }

  /**
   * As {@link #setCharacterEncoding(String)} (Servlet 6.1). No {@code @Override}, since the starter
   * compiles against 6.0: there the wrapper's sets it on the container's response, where the held
   * answer never sees it.
   */
  public void setCharacterEncoding(Charset charset) {
    setCharacterEncoding(charset.name());
  }

  @Override
  public String getCharacterEncoding() {
    return characterEncoding;
  }

  @Override
  public void setContentLength(int len) {}

  @Override
  public void setContentLengthLong(long len) {}

  @Override
  public void setStatus(int sc) {
    if (ended) {
      return;
    }
    this.status = sc;
  }

  @Override
  public int getStatus() {
    return status;
  }

  /** Holds the error status; the body written before it is dropped, as the container resets its buffer. */
  @Override
  public void sendError(int sc) {
    sendError(sc, null);
  }

  /** As {@link #sendError(int)}: the message would only go into the container's error page. */
  @Override
  public void sendError(int sc, String msg) {
    resetBuffer();
    this.status = sc;
    ended = true;
  }

  @Override
  public void sendRedirect(String location) {
    sendRedirect(location, 302, true);
  }

  // Servlet 6.1's overloads, without @Override since the starter compiles against 6.0: there they
  // override the wrapper's, which send the redirect straight to the container, before the commit.

  /** Holds a redirect with this status, the body cleared (Servlet 6.1). */
  public void sendRedirect(String location, int sc) {
    sendRedirect(location, sc, true);
  }

  /** Holds a 302 redirect, the body cleared if {@code clearBuffer} (Servlet 6.1). */
  public void sendRedirect(String location, boolean clearBuffer) {
    sendRedirect(location, 302, clearBuffer);
  }

  /** Holds a redirect, the body cleared if {@code clearBuffer}, as the container would (Servlet 6.1). */
  public void sendRedirect(String location, int sc, boolean clearBuffer) {
    if (clearBuffer) {
      resetBuffer();
    } else {
      // Text the writer's encoder still holds was written before the redirect: it stays.
      checkNotEnded();
      flushWriter();
    }
    this.status = sc;
    setHeader("Location", location);
    ended = true;
  }

  private void checkNotEnded() {
    if (ended) {
      throw new IllegalStateException("the response is committed: sendRedirect or sendError already ended it");
    }
  }

  @Override
  public void flushBuffer() {
    flushWriter();
  }

  /** False until sendRedirect or sendError: nothing is sent before the commit. */
  @Override
  public boolean isCommitted() {
    return ended;
  }

  @Override
  public void reset() {
    resetBuffer();
    headers.clear();
    status = 200;
  }

  @Override
  public void resetBuffer() {
    checkNotEnded();
    flushWriter();
    body.reset();
  }

  @Override
  public void setLocale(Locale loc) {}

  /** Throws once the answer ended, as the container's committed response does. */
  @Override
  public void setBufferSize(int size) {
    checkNotEnded();
    super.setBufferSize(size);
  }

  /** Throws once the answer ended, as the container's committed response does. */
  @Override
  public void setTrailerFields(Supplier<Map<String, String>> supplier) {
    checkNotEnded();
    super.setTrailerFields(supplier);
  }
}
