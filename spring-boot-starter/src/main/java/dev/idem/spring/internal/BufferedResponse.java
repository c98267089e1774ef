package dev.idem.spring.internal;

import dev.idem.server.CapturedResponse;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.ServletResponse;
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
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
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
 * does, and so do writing all the content a declared Content-Length announced and closing the
 * output stream or writer: the body written before is dropped ({@code sendError}, and a redirect
 * unless {@code clearBuffer} is false), writes after (and past a declared length) are dropped, and
 * the response reads as committed: later status, header, cookie and content type changes are
 * ignored, and {@code reset}, {@code resetBuffer}, {@code setBufferSize} and
 * {@code setTrailerFields} throw {@link IllegalStateException}, as the container's. A length
 * declared after the body already reached it cuts the body to it and (if more than zero) ends the
 * answer, as Tomcat does; a {@code Content-Length} header is parsed as Tomcat parses it
 * ({@code " 2"} is no length), and a null one forgets the length (Servlet 6.1, Tomcat 11).
 * {@code flushBuffer} commits the status and headers as Tomcat's does: later changes to them are
 * ignored and the response reads as committed, while the body goes on. {@code getWriter} sets the
 * encoding it writes in (the container's default if the handler chose none: ISO-8859-1, or the
 * context's response encoding), so the Content-Type names it, as Tomcat's. Until the handler
 * chooses one, {@code getCharacterEncoding} reads the container's without choosing it: the
 * Content-Type gains no charset from it. Date headers are IMF-fixdate, as the container writes
 * them.
 *
 * <p>Cookies are held as {@link Cookie} objects, not as {@code Set-Cookie} text: after the commit
 * {@link #addCookiesTo} hands them to the container, which renders them as it renders the same
 * handler's cookies unguarded (Domain, SameSite, Partitioned and its own defaults). So no
 * {@code Set-Cookie} is ever in {@link #captured()}: it is a secret the guard never stores, and a
 * replay carries none. {@code setLocale} sets {@code Content-Language}, and the charset the
 * container maps the locale to, as the container does; the container's response is left without
 * the locale. A {@code Content-Type} header is taken as {@code setContentType}, as Tomcat takes it:
 * its charset is the writer's. After {@code getWriter} a type's charset is ignored (the body's is
 * named), and {@code reset} forgets the locale, the encoding and which of writer and stream was
 * taken, as Tomcat's (the writer itself is kept, as Tomcat keeps its one writer).
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
  /**
   * The {@code Set-Cookie} lines in the order the handler made them: a copy of each
   * {@code addCookie}'s cookie (the container renders a cookie when it is added, so later changes
   * to the handler's object do not count), or the text of a {@code Set-Cookie} header it set.
   */
  private final List<SetCookie> cookies = new ArrayList<>();
  private final long limit;
  private boolean overflowed;
  /**
   * Whether the answer ended: by sendRedirect or sendError, by writing all the content a declared
   * Content-Length announced, or by closing the output stream or writer (Servlet spec, closure of
   * the response). The container stops taking body at that point and ignores later status and
   * header changes (Tomcat's facade reads as committed); holding either would store and replay an
   * answer that the handler's client never gets without the guard. Read it through {@link #ended()}.
   */
  private boolean ended;
  /**
   * Whether {@link #flushBuffer()} committed the status and headers: Tomcat sends them there, so
   * later status and header changes never reach the handler's client (they are ignored here too),
   * while the body goes on until the answer ends.
   */
  private boolean flushed;
  /** The Content-Length the handler declared, or -1; body past it is dropped, as Tomcat drops it. */
  private long declared = -1;
  private int status = 200;
  private String characterEncoding;
  /**
   * Whether the handler chose the encoding (setCharacterEncoding, a charset in setContentType, or
   * getWriter's default): the one a locale maps to is not chosen, so another locale replaces it.
   */
  private boolean encodingChosen;
  /** What setLocale set, or null: the container's default then. */
  private Locale locale;
  /** The container's locale before {@link #mappedCharset} first set one there, or null before. */
  private Locale containerLocale;
  private ServletOutputStream stream;
  /** Whether the handler took the output stream: the writer is refused then, as the container's. */
  private boolean streamTaken;
  /** Whether the handler took the writer: the stream is refused then, as the container's. */
  private boolean writerTaken;
  /**
   * Made at the first getWriter, and kept across a reset, as Tomcat keeps its one writer: a handler
   * that holds it from before the reset writes through it, in order with what it writes after.
   */
  private PrintWriter writer;
  /** The encoding {@link #writer} writes in. */
  private String writerEncoding;

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
    // A PrintWriter swallows the TooLarge; room() has noted it.
    if (writer != null) {
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
    return new CapturedResponse(status, withContainersType(), body.toByteArray());
  }

  /**
   * The held headers, with the container's content type naming the handler's charset if the
   * handler set no type: a filter before the guard set that type on the container's response, and
   * Tomcat names the charset the handler's locale, {@code setCharacterEncoding} or writer set on it
   * ({@code text/plain;charset=UTF-8}), which the container's response here never got.
   */
  private Map<String, List<String>> withContainersType() {
    String type = getResponse().getContentType();
    if (characterEncoding == null || type == null || containsHeader("Content-Type")) {
      return headers;
    }
    Map<String, List<String>> out = new LinkedHashMap<>(headers);
    out.put("Content-Type", List.of(withCharset(type, characterEncoding)));
    return out;
  }

  /**
   * As the container's: refused once the handler took the writer. Tomcat ends a forward by closing
   * the writer and falls back to the stream when the writer is refused; a response that handed out
   * both had Tomcat open a writer over a view's stream, which named ISO-8859-1 in a {@code text/*}
   * type the view had written UTF-8 bytes under.
   */
  @Override
  public ServletOutputStream getOutputStream() {
    if (writerTaken) {
      throw new IllegalStateException("getWriter() has already been called for this response");
    }
    streamTaken = true;
    return stream();
  }

  private ServletOutputStream stream() {
    if (stream == null) {
      stream = new ServletOutputStream() {
        @Override
        public void write(int b) throws IOException {
          if (taken(1) == 1) {
            room(1);
            body.write(b);
            endIfDeclaredWritten();
          }
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
          int n = taken(len);
          if (n > 0) {
            room(n);
            body.write(b, off, n);
            endIfDeclaredWritten();
          }
        }

        /** Ends the answer, as closing Tomcat's stream does; the guard sends it after the commit. */
        @Override
        public void close() {
          ended = true;
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

  /** How many of the next {@code len} body bytes the answer takes: none once it ended, none past a declared length. */
  private int taken(int len) {
    if (ended) {
      return 0;
    }
    return declared < 0 ? len : (int) Math.min(len, Math.max(0, declared - body.size()));
  }

  /** Written in full, a declared Content-Length of more than zero ends the answer. */
  private void endIfDeclaredWritten() {
    if (declared > 0 && body.size() >= declared) {
      ended = true;
    }
  }

  /**
   * Whether the answer ended. With a declared length, the text the writer's encoder still holds
   * is counted first: Tomcat counts it when written, and the declared end may be in it.
   */
  private boolean ended() {
    if (!ended && declared >= 0) {
      flushWriter();
    }
    return ended;
  }

  /**
   * The writer encodes in the response's character encoding ({@link #getCharacterEncoding()}: the
   * container's default if the handler chose none), which it then sets, as Tomcat's
   * {@code getWriter()} does: the held Content-Type names the charset the body is in
   * ({@code text/plain;charset=ISO-8859-1}), or a client that defaults to UTF-8 would read the
   * text wrong, first and on every replay.
   */
  @Override
  public PrintWriter getWriter() {
    if (streamTaken) {
      throw new IllegalStateException("getOutputStream() has already been called for this response");
    }
    if (writer != null && !writerTaken && characterEncoding == null) {
      // Taken again after a reset, which forgot the encoding: the body is still in the writer's.
      setCharacterEncoding(writerEncoding);
    }
    if (writer == null) {
      String enc = getCharacterEncoding();
      if (enc == null) {
        // A container that names no default (Tomcat always names one): the Servlet spec's.
        enc = StandardCharsets.ISO_8859_1.name();
      }
      if (characterEncoding == null) {
        setCharacterEncoding(enc);
      }
      Charset cs = Charset.forName(enc);
      writer = new PrintWriter(new OutputStreamWriter(stream(), cs));
      writerEncoding = enc;
    }
    writerTaken = true;
    return writer;
  }

  /** Whether status and headers are final: the answer ended or {@link #flushBuffer()} committed them. */
  private boolean frozen() {
    return flushed || ended();
  }

  private void put(String name, String value, boolean add) {
    if (frozen()) {
      return;
    }
    declaredBy(name, value);
    if (isSetCookie(name)) {
      if (!add) {
        cookies.clear();
      }
      cookies.add(new SetCookie(null, value));
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
    if (frozen()) {
      return;
    }
    if (isContentType(name) && value != null) {
      // Tomcat takes the header as setContentType (Spring writes the type with addHeader): its
      // charset becomes the writer's, or the charset chosen before is named.
      setContentType(value);
      return;
    }
    if (value == null) {
      headers.keySet().removeIf(n -> n.equalsIgnoreCase(name));
      if (isSetCookie(name)) {
        cookies.clear();
      }
      declaredBy(name, null);
    } else {
      put(name, value, false);
    }
  }

  /** A Content-Type replaces the type, as {@link #setHeader} (Tomcat: a single-valued header). */
  @Override
  public void addHeader(String name, String value) {
    if (isContentType(name) && value != null) {
      setContentType(value);
      return;
    }
    put(name, value, true);
  }

  private static boolean isContentType(String name) {
    return "Content-Type".equalsIgnoreCase(name);
  }

  @Override
  public void setIntHeader(String name, int value) {
    setHeader(name, Integer.toString(value));
  }

  @Override
  public void addIntHeader(String name, int value) {
    addHeader(name, Integer.toString(value));
  }

  /**
   * IMF-fixdate (RFC 9110 section 5.6.7), which senders must write and the container writes. Not
   * {@link DateTimeFormatter#RFC_1123_DATE_TIME}: it writes a one-digit day ({@code Sat, 1 Feb
   * 2025}), which strict parsers refuse. The same pattern as the testkit's {@code HttpDates}, which
   * the starter cannot use: the testkit is a test dependency.
   */
  private static final DateTimeFormatter IMF_FIXDATE =
      DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US).withZone(ZoneOffset.UTC);

  @Override
  public void setDateHeader(String name, long date) {
    setHeader(name, IMF_FIXDATE.format(Instant.ofEpochMilli(date)));
  }

  @Override
  public void addDateHeader(String name, long date) {
    addHeader(name, IMF_FIXDATE.format(Instant.ofEpochMilli(date)));
  }

  @Override
  public boolean containsHeader(String name) {
    return isSetCookie(name) ? !cookies.isEmpty() : headers.keySet().stream().anyMatch(n -> n.equalsIgnoreCase(name));
  }

  @Override
  public String getHeader(String name) {
    Collection<String> v = getHeaders(name);
    return v.isEmpty() ? null : v.iterator().next();
  }

  @Override
  public Collection<String> getHeaders(String name) {
    List<String> out = new ArrayList<>();
    if (isSetCookie(name)) {
      cookies.forEach(c -> out.add(c.text()));
      return out;
    }
    headers.forEach((n, v) -> {
      if (n.equalsIgnoreCase(name)) {
        out.addAll(v);
      }
    });
    return out;
  }

  @Override
  public Collection<String> getHeaderNames() {
    List<String> names = new ArrayList<>(headers.keySet());
    if (!cookies.isEmpty()) {
      names.add("Set-Cookie");
    }
    return names;
  }

  /** Held, a copy of it, for the container to render after the commit ({@link #addCookiesTo}). */
  @Override
  public void addCookie(Cookie cookie) {
    if (frozen()) {
      return;
    }
    cookies.add(new SetCookie((Cookie) cookie.clone(), null));
  }

  /**
   * Adds the handler's cookies and {@code Set-Cookie} headers, in the order it made them, to the
   * container's response, which renders the cookies itself, as it does unguarded. Call it after the
   * commit, just before the handler's answer is sent, and only then: never for a refusal, nor a
   * replay (no cookie is stored: Set-Cookie is a secret).
   *
   * @param container the container's response, not committed yet
   */
  void addCookiesTo(HttpServletResponse container) {
    for (SetCookie c : cookies) {
      if (c.cookie() != null) {
        container.addCookie(c.cookie());
      } else {
        container.addHeader("Set-Cookie", c.line());
      }
    }
  }

  private static boolean isSetCookie(String name) {
    return "Set-Cookie".equalsIgnoreCase(name);
  }

  /** A held Set-Cookie: a cookie the container renders, or a header's text (then cookie is null). */
  private record SetCookie(Cookie cookie, String line) {
    /**
     * The text, for a handler that reads its Set-Cookie headers back. For a cookie, a rendering of
     * its attributes in the RFC 6265 form; what is sent is the container's rendering.
     */
    String text() {
      if (cookie == null) {
        return line;
      }
      StringBuilder sb = new StringBuilder(cookie.getName()).append('=')
          .append(cookie.getValue() == null ? "" : cookie.getValue());
      cookie.getAttributes().forEach((name, value) -> {
        // Flags are rendered below from their getters; a comment is not sent (RFC 6265 has none).
        if (!"Secure".equalsIgnoreCase(name) && !"HttpOnly".equalsIgnoreCase(name)
            && !"Comment".equalsIgnoreCase(name)) {
          sb.append("; ").append(name);
          if (value != null && !value.isEmpty()) {
            sb.append('=').append(value);
          }
        }
      });
      if (cookie.getSecure()) {
        sb.append("; Secure");
      }
      if (cookie.isHttpOnly()) {
        sb.append("; HttpOnly");
      }
      return sb.toString();
    }
  }

  @Override
  public void setContentType(String type) {
    if (frozen()) {
      return;
    }
    if (type == null) {
      setHeader("Content-Type", null);
      if (!writerTaken) {
        // Tomcat's setContentType(null) forgets the charset too (chosen or a locale's): the next
        // type and getWriter() fall back to the container's default.
        characterEncoding = null;
        encodingChosen = false;
      }
      return;
    }
    String t = type;
    if (writerTaken && characterEncoding != null) {
      // The writer's encoding is fixed: Tomcat ignores the type's charset then (usingWriter) and
      // names the one the body is in, or a client would decode the body with the wrong charset.
      put("Content-Type", withCharset(t, characterEncoding), false);
      return;
    }
    int i = t.toLowerCase(Locale.ROOT).indexOf("charset=");
    if (i >= 0) {
      characterEncoding = t.substring(i + "charset=".length()).trim();
      encodingChosen = true;
    } else if (characterEncoding != null && !t.toLowerCase(Locale.ROOT).contains("charset")) {
      // Any type, as Tomcat: a charset set before (setCharacterEncoding, a locale's) is named. Naming
      // it does not choose it: a locale's stays a locale's, and a later setLocale still replaces it
      // (Tomcat's setContentType leaves isCharacterEncodingSet as it was for a type without one).
      t = t + ";charset=" + characterEncoding;
    }
    put("Content-Type", t, false);
  }

  @Override
  public String getContentType() {
    return getHeader("Content-Type");
  }

  @Override
  public void setCharacterEncoding(String charset) {
    // After getWriter() the writer's encoding is fixed: Tomcat ignores the call then.
    if (frozen() || writerTaken) {
      return;
    }
    characterEncoding = charset;
    // A null clears the encoding (Servlet 6, Tomcat): nothing is chosen, a later locale's charset counts.
    encodingChosen = charset != null;
    String type = getContentType();
    if (type != null) {
      put("Content-Type", charset == null ? type.replaceAll(CHARSET_PARAMETER, "") : withCharset(type, charset), false);
    }
  }

  /** The content type naming this charset in place of any it named. */
  private static String withCharset(String type, String charset) {
    return type.replaceAll(CHARSET_PARAMETER, "") + ";charset=" + charset;
  }

  private static final String CHARSET_PARAMETER = "(?i)\\s*;\\s*charset\\s*=[^;]*";

  /**
   * As {@link #setCharacterEncoding(String)} (Servlet 6.1). No {@code @Override}, since the starter
   * compiles against 6.0: there the wrapper's sets it on the container's response, where the held
   * answer never sees it.
   */
  public void setCharacterEncoding(Charset charset) {
    setCharacterEncoding(charset.name());
  }

  /**
   * The encoding the handler chose (or its locale's), else the container's response's: the
   * Servlet spec's ISO-8859-1, the context's response encoding, or one a filter before the guard
   * set there. Never null where the container's is not, so that handler code which encodes with it
   * ({@code new OutputStreamWriter(out, response.getCharacterEncoding())}) works guarded as it
   * does unguarded. Reading the container's does not choose it: the held Content-Type gains no
   * charset from it, as Tomcat's does not.
   */
  @Override
  public String getCharacterEncoding() {
    return characterEncoding != null ? characterEncoding : super.getCharacterEncoding();
  }

  /** Not held as a header (the guard sends the body's own length), but it may end the answer. */
  @Override
  public void setContentLength(int len) {
    setContentLengthLong(len);
  }

  /** As {@link #setContentLength(int)}. */
  @Override
  public void setContentLengthLong(long len) {
    if (!frozen()) {
      declare(len);
    }
  }

  /**
   * A Content-Length header declares the length as setContentLength does (Tomcat treats it so).
   * The value is parsed as Tomcat parses it, {@link Long#parseLong} as it is: {@code " 2"} is no
   * length there (Tomcat keeps it as a plain header), so none here. A null value removes the header
   * and forgets the length, as Servlet 6.1 and Tomcat 11 do (Tomcat 10.1 ignores the call and keeps
   * the length; the guard does not follow it there, so one rule holds in lease and transactional
   * mode on both, and the first answer and its replays are the same).
   */
  private void declaredBy(String name, String value) {
    if ("Content-Length".equalsIgnoreCase(name)) {
      long len = -1;
      try {
        len = value == null ? -1 : Long.parseLong(value);
      } catch (NumberFormatException notALength) {
        // Not a length Tomcat would take either: nothing declared.
      }
      declare(len);
    }
  }

  /**
   * Takes a declared length. A length the body has already reached is taken as Tomcat takes it:
   * body past it is cut off (Tomcat sends only the declared bytes) and, if more than zero, the
   * answer ends there (the Servlet spec's "has been written" reads the same way). Jetty does
   * neither; the lease-mode filter follows the same rule, so both modes answer alike.
   */
  private void declare(long len) {
    declared = len;
    if (len >= 0 && body.size() > len) {
      byte[] kept = Arrays.copyOf(body.toByteArray(), (int) len);
      body.reset();
      body.write(kept, 0, kept.length);
    }
    endIfDeclaredWritten();
  }

  @Override
  public void setStatus(int sc) {
    if (frozen()) {
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
    if (frozen()) {
      throw new IllegalStateException("the response is committed: sendRedirect, sendError, the declared"
          + " Content-Length written in full, the closed output stream or flushBuffer() already committed it");
    }
  }

  /**
   * Commits the status and headers, as Tomcat's does (Servlet spec): later changes to them are
   * ignored and {@link #isCommitted()} is true. Nothing is sent before the transaction commits;
   * writes go on to the held body until the answer ends.
   */
  @Override
  public void flushBuffer() {
    flushWriter();
    flushed = true;
  }

  /** False until the answer ended or {@link #flushBuffer()} committed it: nothing is sent before the commit. */
  @Override
  public boolean isCommitted() {
    return frozen();
  }

  /**
   * Clears the body, status, headers, cookies, locale and encoding, as Tomcat's reset does: a
   * charset chosen or mapped from a locale before is forgotten, and one may be chosen again (Tomcat
   * clears usingWriter), for the stream, say. The writer is kept and writes in its encoding, which
   * a {@code getWriter} after the reset names (Tomcat keeps its writer's converter too).
   */
  @Override
  public void reset() {
    resetBuffer();
    headers.clear();
    cookies.clear();
    locale = null;
    characterEncoding = null;
    encodingChosen = false;
    writerTaken = false; // as the containers' reset: either may be taken again (the writer is kept)
    streamTaken = false;
    declared = -1;
    status = 200;
  }

  @Override
  public void resetBuffer() {
    checkNotEnded();
    flushWriter();
    body.reset();
  }

  /**
   * Sets {@code Content-Language} (on the replay allowlist, so it is stored), and, unless the
   * handler chose an encoding or got the writer, the charset the container maps the locale to,
   * as Tomcat does ({@code fr-FR} and {@code application/json;charset=UTF-8} in Spring Boot).
   * Ignored once the response is committed, as the container's.
   */
  @Override
  public void setLocale(Locale loc) {
    if (frozen()) {
      return;
    }
    locale = loc;
    setHeader("Content-Language", loc == null ? null : loc.toLanguageTag());
    if (writerTaken || encodingChosen) {
      return;
    }
    String type = getContentType();
    if (loc == null) {
      // Tomcat forgets a locale's charset with the locale.
      characterEncoding = null;
      if (type != null) {
        put("Content-Type", type.replaceAll(CHARSET_PARAMETER, ""), false);
      }
      return;
    }
    String mapped = mappedCharset(loc);
    if (mapped != null) {
      characterEncoding = mapped;
      if (type != null) {
        put("Content-Type", withCharset(type, mapped), false);
      }
    }
  }

  /**
   * The charset the container names after the locale is set, or null if it names none: the one it
   * maps the locale to, or one it had before that the locale does not replace (a charset an outer
   * filter chose, which no locale replaces). Only the container knows its locale-encoding mapping
   * (the deployment descriptor's, Spring Boot's {@code server.servlet.encoding.mapping}, Tomcat's
   * own), and the Servlet API reads it only through {@code setLocale}: the locale is set on the
   * container's response, what it names read back, and the container's response put back as it
   * was, so that nothing of the handler's locale stays there: a reset or a rollback forgets it (the
   * guard's own 500 or 503 carries no Content-Language of the handler's), and the answer sent after
   * the commit carries only what is held.
   *
   * <p>The charset is read from the container's content type, not from
   * {@code getCharacterEncoding()}: that answers the container's default when no charset is set, so
   * a locale mapped to the default (de to ISO-8859-1, Tomcat's) would read as one with no mapping,
   * while the container names it. With no content type on the container (the guard holds the
   * handler's), a bare one is set for the look and taken back with {@code setContentType(null)},
   * which forgets the container's charset too. So what was there is told apart first: a charset
   * chosen (by an outer filter's {@code setCharacterEncoding}, Boot's forced encoding) survives
   * {@code setLocale(null)} on Tomcat 10.1 and 11, a locale's does not, and a chosen one is set back
   * with {@code setCharacterEncoding}, chosen as it was; a locale's comes back with the locale. A
   * locale set on the container's response before the guard (one other than the JVM's default,
   * which the container reads when none was set and which sends no Content-Language) is set back;
   * otherwise it is cleared with {@code setLocale(null)}, which Tomcat takes as "no locale": no
   * Content-Language, the locale's charset forgotten unless one was chosen. (An outer filter that
   * set the JVM's default locale itself loses its Content-Language.)
   */
  private String mappedCharset(Locale loc) {
    ServletResponse container = getResponse();
    if (container.isCommitted()) {
      return null;
    }
    if (containerLocale == null) {
      containerLocale = container.getLocale();
    }
    Locale localeBefore = container.getLocale();
    boolean setBefore = localeBefore != null && !localeBefore.equals(Locale.getDefault());
    String before = container.getCharacterEncoding();
    boolean typeBefore = container.getContentType() != null;
    if (!typeBefore) {
      container.setContentType("text/plain");
    }
    container.setLocale(loc);
    String mapped = namesCharset(container) ? container.getCharacterEncoding() : null;
    container.setLocale(null);
    boolean chosen = namesCharset(container);
    if (!typeBefore) {
      container.setContentType(null);
    }
    container.setLocale(setBefore ? localeBefore : null);
    if (chosen) {
      container.setCharacterEncoding(before);
    }
    return mapped;
  }

  /** Whether the container's content type names a charset: one set, not the default it falls back to. */
  private static boolean namesCharset(ServletResponse container) {
    String type = container.getContentType();
    return type != null && type.toLowerCase(Locale.ROOT).contains("charset=");
  }

  /** What setLocale set, else the container's default. */
  @Override
  public Locale getLocale() {
    if (locale != null) {
      return locale;
    }
    // The container's, as it was before a probe (after one that cleared it, Tomcat's reads null).
    return containerLocale != null ? containerLocale : super.getLocale();
  }

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
