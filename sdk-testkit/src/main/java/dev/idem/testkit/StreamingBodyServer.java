package dev.idem.testkit;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.function.IntFunction;

/**
 * A bare HTTP/1.1 server that streams generated response bodies of any size, for tests of how a
 * client handles large, endless and trickling bodies (held at a gate, or one byte at a time in real
 * time) without the server holding them in memory
 * (the reference {@link IdempotentServer} buffers every reply). Every connection serves one
 * request and is then closed. Body byte {@code i} is {@code (byte) (i % 251)}; see
 * {@link #expectedByte(long)}. The {@code Idempotency-Key} header of every request is recorded, so
 * a test can check the key went out on every attempt.
 *
 * <p>A request body, sized by {@code Content-Length} (of any size, past 2 GiB too) or sent with
 * {@code Transfer-Encoding: chunked}, is read to its end and dropped before the answer goes out. A
 * request whose body has no end the server can find (a Content-Length that is not a length, two
 * that differ, a transfer coding other than chunked last) gets 400 and is not counted in
 * {@link #requests()}, as does one with a line (request line, header, chunk size or trailer)
 * longer than 8 KiB, refused without reading on; nor is one whose client goes away before it is
 * whole, a chunked body included that ends before the empty line closing its trailer section.
 * A head (request line and header lines) of more than 100 header lines or 64 KiB, and a trailer
 * section of more than 100 lines or 64 KiB (bytes of the lines without their CR LF), get 431 as
 * soon as they pass the limit, as from Apache or Tomcat, and are not counted either: so a client
 * that sends lines without end neither fills the server's memory nor holds its thread.
 *
 * <p>The server waits at most its read timeout ({@link #DEFAULT_READ_TIMEOUT}, 30 s, unless given
 * to {@link #start(IntFunction, Duration)}) for each next bytes of a request, its head or its body:
 * a client that connects and sends nothing, or stops in the middle of its request, has its
 * connection closed then, without an answer, and is not counted, so that it does not hold a
 * thread of the server for good. The timeout is per read, not for the whole request, so a request
 * body of any size still arrives while its bytes keep coming. It does not apply while the server
 * writes its reply.
 *
 * <p>Binds an ephemeral port on the loopback address. Thread-safe; one daemon thread per connection.
 */
public final class StreamingBodyServer implements AutoCloseable {
  /** The longest line of a request head, chunk size or trailer, in bytes without its CR LF. */
  private static final int MAX_LINE = 8192;
  /** The most header lines of a request head, and the most lines of a trailer section. */
  private static final int MAX_SECTION_LINES = 100;
  /** The most bytes of a request head, and of a trailer section, without the lines' CR LF. */
  private static final int MAX_SECTION_BYTES = 64 * 1024;

  /**
   * How long the server waits for the next bytes of a request unless told otherwise: 30 s, the
   * order of a common web server's (Apache's {@code Timeout} default is 60 s, its
   * {@code RequestReadTimeout} 20 to 40 s for the head).
   */
  public static final Duration DEFAULT_READ_TIMEOUT = Duration.ofSeconds(30);

  private final ServerSocket socket;
  private final IntFunction<Reply> replies;
  /** The socket read timeout for requests, in milliseconds, at least 1 (0 would mean none). */
  private final int readTimeoutMillis;
  private final List<Optional<String>> keys = new CopyOnWriteArrayList<>();
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private final CountDownLatch released = new CountDownLatch(1);
  private final CountDownLatch streamClosed = new CountDownLatch(1);

  private StreamingBodyServer(ServerSocket socket, IntFunction<Reply> replies, int readTimeoutMillis) {
    this.socket = socket;
    this.replies = replies;
    this.readTimeoutMillis = readTimeoutMillis;
  }

  /**
   * Starts a server that answers request {@code n} (from 0) with {@code replies.apply(n)}, with the
   * {@link #DEFAULT_READ_TIMEOUT} of 30 s.
   *
   * @param replies the reply for each request index; called once per request
   * @return the running server
   * @throws IOException if the port cannot be bound
   */
  public static StreamingBodyServer start(IntFunction<Reply> replies) throws IOException {
    return start(replies, DEFAULT_READ_TIMEOUT);
  }

  /**
   * Starts a server that answers request {@code n} (from 0) with {@code replies.apply(n)}, and that
   * waits at most {@code readTimeout} for each next bytes of a request before it closes the
   * connection unanswered and uncounted. A test of a client that stalls gives a short one (a few
   * hundred milliseconds) rather than waiting for the default.
   *
   * @param replies the reply for each request index; called once per request
   * @param readTimeout the longest wait for the next bytes of a request; positive, at least 1 ms
   *     once rounded down to milliseconds, and at most {@link Integer#MAX_VALUE} ms
   * @return the running server
   * @throws IOException if the port cannot be bound
   * @throws IllegalArgumentException if {@code readTimeout} is not positive (a socket timeout of 0
   *     would mean no timeout), under 1 ms, or longer than {@link Integer#MAX_VALUE} ms
   * @throws NullPointerException if {@code replies} or {@code readTimeout} is null
   */
  public static StreamingBodyServer start(IntFunction<Reply> replies, Duration readTimeout) throws IOException {
    java.util.Objects.requireNonNull(replies, "replies");
    java.util.Objects.requireNonNull(readTimeout, "readTimeout");
    if (readTimeout.compareTo(Duration.ofMillis(1)) < 0 || readTimeout.compareTo(Duration.ofMillis(Integer.MAX_VALUE)) > 0) {
      throw new IllegalArgumentException("readTimeout must be 1 ms to " + Integer.MAX_VALUE + " ms: " + readTimeout);
    }
    ServerSocket s = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    StreamingBodyServer server = new StreamingBodyServer(s, replies, (int) readTimeout.toMillis());
    Thread acceptor = new Thread(server::acceptLoop, "streaming-body-server-accept");
    acceptor.setDaemon(true);
    acceptor.start();
    return server;
  }

  /**
   * The byte at {@code index} of every generated body.
   *
   * @param index the position in the body, from 0
   * @return {@code (byte) (index % 251)}
   */
  public static byte expectedByte(long index) {
    return (byte) (index % 251);
  }

  /**
   * What a client read of a generated body: how many bytes, and how many of them differ from
   * {@link #expectedByte} at their position.
   *
   * @param bytes the bytes read
   * @param mismatches the bytes that differ from {@link #expectedByte}
   */
  public record Received(long bytes, long mismatches) {}

  /**
   * Reads a generated body to its end, 8 KiB at a time (so the reader never holds more), and
   * compares every byte with {@link #expectedByte}: the check a streaming client's caller makes.
   *
   * @param in the body as the client hands it over; not closed
   * @return what was read
   * @throws IOException if reading fails
   */
  public static Received readAll(InputStream in) throws IOException {
    byte[] buffer = new byte[8192];
    long read = 0;
    long mismatches = 0;
    int n;
    while ((n = in.read(buffer)) != -1) {
      for (int i = 0; i < n; i++) {
        if (buffer[i] != expectedByte(read + i)) {
          mismatches++;
        }
      }
      read += n;
    }
    return new Received(read, mismatches);
  }

  /**
   * The base URL, such as {@code http://127.0.0.1:40123/}.
   *
   * @return the URL of this server
   */
  public URI url() {
    return URI.create("http://" + socket.getInetAddress().getHostAddress() + ":" + socket.getLocalPort() + "/");
  }

  /**
   * The {@code Idempotency-Key} header of every request received so far, in order; empty where absent.
   *
   * @return a snapshot of the key headers
   */
  public List<Optional<String>> keys() {
    return List.copyOf(keys);
  }

  /**
   * How many requests were received (each one is an effect, for this server).
   *
   * @return the count so far
   */
  public int requests() {
    return keys.size();
  }

  /** Lets every body that waits at its {@link Reply#gatedAfter gate} go on. Idempotent. */
  public void release() {
    released.countDown();
  }

  /**
   * Waits until a streamed body (endless or gated) could not be written any more because the
   * client closed its end: proof that the client stopped reading instead of buffering on.
   *
   * @param timeoutMillis how long to wait at most
   * @return true if a body write failed within the time
   * @throws InterruptedException if interrupted while waiting
   */
  public boolean awaitClientClosed(long timeoutMillis) throws InterruptedException {
    return streamClosed.await(timeoutMillis, java.util.concurrent.TimeUnit.MILLISECONDS);
  }

  /** Stops accepting and closes every open connection. */
  @Override
  public void close() {
    closeQuietly(socket);
    open.forEach(StreamingBodyServer::closeQuietly);
    released.countDown();
  }

  private static void closeQuietly(java.io.Closeable c) {
    try {
      c.close();
    } catch (IOException ignored) {
      // closing anyway
    }
  }

  private void acceptLoop() {
    while (!socket.isClosed()) {
      Socket s;
      try {
        s = socket.accept();
      } catch (IOException e) {
        return; // closed
      }
      open.add(s);
      Thread t = new Thread(() -> serve(s), "streaming-body-server-conn");
      t.setDaemon(true);
      t.start();
    }
  }

  private void serve(Socket s) {
    try (s) {
      InputStream in = new BufferedInputStream(s.getInputStream());
      Optional<String> key;
      try {
        // Bounds every read of the request: a SocketTimeoutException is an IOException, so a
        // client that stalls is dropped below as one that went away, its request not counted.
        s.setSoTimeout(readTimeoutMillis);
        List<String> head = readHead(in);
        if (head.isEmpty()) {
          return;
        }
        key = readRequest(head, in);
      } catch (BadRequest e) {
        refuse(s.getOutputStream(), e.status, e.getMessage());
        return;
      } catch (IOException e) {
        // The client went away, or sent nothing for the read timeout, before the whole request
        // arrived: nothing was taken.
        return;
      }
      int index;
      synchronized (keys) {
        index = keys.size();
        keys.add(key);
      }
      write(s.getOutputStream(), replies.apply(index));
    } catch (IOException e) {
      streamClosed.countDown();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      open.remove(s);
    }
  }

  /**
   * Reads the rest of a request after its head, the body included, and returns its key header.
   * The whole body is read (and dropped) before the server answers: closing a socket with request
   * bytes still unread makes the kernel send a reset, which can overtake the answer, so the client
   * would lose a reply to a request the server counted.
   */
  private static Optional<String> readRequest(List<String> head, InputStream in) throws IOException, BadRequest {
    List<String> lengths = new ArrayList<>();
    List<String> codings = new ArrayList<>();
    String key = null;
    for (String line : head.subList(1, head.size())) {
      int colon = line.indexOf(':');
      if (colon < 0) {
        continue;
      }
      String name = line.substring(0, colon).trim().toLowerCase(Locale.ROOT);
      String value = line.substring(colon + 1).trim();
      if (name.equals("content-length")) {
        lengths.add(value);
      } else if (name.equals("transfer-encoding")) {
        for (String coding : value.split(",")) {
          codings.add(coding.trim().toLowerCase(Locale.ROOT));
        }
      } else if (name.equals("idempotency-key")) {
        key = value;
      }
    }
    // RFC 9112, section 6.3: Transfer-Encoding overrides Content-Length, and a request body whose
    // final coding is not chunked has no length the server could find.
    if (!codings.isEmpty()) {
      if (!codings.get(codings.size() - 1).equals("chunked")) {
        throw new BadRequest("a request body whose last transfer coding is not chunked: " + codings);
      }
      skipChunked(in);
    } else if (!lengths.isEmpty()) {
      in.skipNBytes(contentLength(lengths));
    }
    return Optional.ofNullable(key);
  }

  /** One Content-Length, as a long: a body over 2 GiB is read to its end like any other. */
  private static long contentLength(List<String> values) throws BadRequest {
    if (values.stream().distinct().count() > 1) {
      throw new BadRequest("Content-Length values that differ: " + values);
    }
    String v = values.get(0);
    if (v.isEmpty() || v.length() > 18 || !v.chars().allMatch(c -> c >= '0' && c <= '9')) {
      throw new BadRequest("a Content-Length that is not a length: " + v);
    }
    return Long.parseLong(v);
  }

  /** Reads a chunked body to its last chunk and its trailer section, and drops it. */
  private static void skipChunked(InputStream in) throws IOException, BadRequest {
    while (true) {
      String line = readLine(in);
      if (line == null) {
        throw new java.io.EOFException("the chunked body ended early");
      }
      int ext = line.indexOf(';');
      String hex = (ext < 0 ? line : line.substring(0, ext)).trim();
      if (hex.isEmpty() || hex.length() > 15 || !hex.chars().allMatch(c -> Character.digit(c, 16) >= 0)) {
        throw new BadRequest("a chunk size that is not one: " + hex);
      }
      long size = Long.parseLong(hex, 16);
      if (size == 0) {
        // The body ends with the empty line after the trailers (RFC 9112, 7.1): a stream that ends
        // before it is a request cut short, not counted, as in the chunk data.
        Section trailers = new Section("trailer section");
        while (true) {
          String trailer = readLine(in);
          if (trailer == null) {
            throw new java.io.EOFException("the chunked body ended before its trailer section did");
          }
          if (trailer.isEmpty()) {
            return;
          }
          trailers.add(trailer, true);
        }
      }
      in.skipNBytes(size);
      String end = readLine(in);
      if (end == null) {
        throw new java.io.EOFException("the chunked body ended early");
      }
      if (!end.isEmpty()) {
        throw new BadRequest("a chunk longer than its size");
      }
    }
  }

  /** Answers a request the server refuses (400 or 431); it is not counted. */
  private static void refuse(OutputStream out, int status, String why) throws IOException {
    byte[] body = why.getBytes(StandardCharsets.UTF_8);
    String reason = status == 431 ? "Request Header Fields Too Large" : "Bad Request";
    out.write(("HTTP/1.1 " + status + " " + reason + "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: "
        + body.length + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
    out.write(body);
    out.flush();
  }

  /** Why a request was refused, and with which status: 400, or 431 for a section too large. */
  private static final class BadRequest extends Exception {
    private static final long serialVersionUID = 1L;
    final int status;

    BadRequest(String message) {
      this(400, message);
    }

    BadRequest(int status, String message) {
      super(message, null, false, false);
      this.status = status;
    }
  }

  /**
   * Counts the lines of a head or trailer section as they come, and refuses the one that takes it
   * past {@link #MAX_SECTION_LINES} or {@link #MAX_SECTION_BYTES}, before any more is read.
   */
  private static final class Section {
    private final String name;
    private int lines;
    private long bytes;

    Section(String name) {
      this.name = name;
    }

    void add(String line, boolean countsAsLine) throws BadRequest {
      if (countsAsLine) {
        lines++;
      }
      bytes += line.length();
      if (lines > MAX_SECTION_LINES || bytes > MAX_SECTION_BYTES) {
        throw new BadRequest(431, "a " + name + " of more than " + MAX_SECTION_LINES + " lines or "
            + MAX_SECTION_BYTES + " bytes");
      }
    }
  }

  private void write(OutputStream out, Reply r) throws IOException, InterruptedException {
    StringBuilder h = new StringBuilder("HTTP/1.1 ").append(r.status).append(" X\r\n")
        .append("Content-Type: application/octet-stream\r\nConnection: close\r\n");
    boolean declared = r.declareLength && r.length >= 0;
    h.append(declared ? "Content-Length: " + r.length + "\r\n" : "Transfer-Encoding: chunked\r\n").append("\r\n");
    out.write(h.toString().getBytes(StandardCharsets.US_ASCII));
    out.flush();
    byte[] chunk = new byte[8192];
    long written = 0;
    while (r.length < 0 || written < r.length) {
      if (written == r.gateAfter) {
        released.await();
      }
      long limit = r.gateAfter > written ? r.gateAfter : Long.MAX_VALUE;
      if (!r.byteInterval.isZero()) {
        Thread.sleep(r.byteInterval.toMillis(), r.byteInterval.toNanosPart() % 1_000_000);
        limit = Math.min(limit, written + 1);
      }
      int n = (int) Math.min(chunk.length, Math.min(limit - written, r.length < 0 ? Long.MAX_VALUE : r.length - written));
      for (int i = 0; i < n; i++) {
        chunk[i] = expectedByte(written + i);
      }
      if (!declared) {
        out.write((Integer.toHexString(n) + "\r\n").getBytes(StandardCharsets.US_ASCII));
      }
      out.write(chunk, 0, n);
      if (!declared) {
        out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
      }
      out.flush();
      written += n;
    }
    if (!declared) {
      out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
    }
    out.flush();
  }

  private static List<String> readHead(InputStream in) throws IOException, BadRequest {
    List<String> lines = new ArrayList<>();
    Section head = new Section("request head");
    String l;
    while ((l = readLine(in)) != null) {
      if (l.isEmpty()) {
        return lines;
      }
      // The request line counts in the bytes, not in the lines: those are header lines.
      head.add(l, !lines.isEmpty());
      lines.add(l);
    }
    return List.of();
  }

  /**
   * One line without its CR LF; null at the end of the stream. A line longer than
   * {@link #MAX_LINE} bytes (its CR LF not counted) is refused as soon as it passes the limit, so
   * that a line without end cannot fill the memory.
   */
  private static String readLine(InputStream in) throws IOException, BadRequest {
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    int b;
    while ((b = in.read()) >= 0) {
      if (b == '\n') {
        return line.toString(StandardCharsets.ISO_8859_1).replace("\r", "");
      }
      line.write(b);
      // One byte past the limit may still be the CR before the LF.
      if (line.size() > MAX_LINE + 1 || (line.size() == MAX_LINE + 1 && b != '\r')) {
        throw new BadRequest("a request line, header line, chunk-size line or trailer line longer than "
            + MAX_LINE + " bytes");
      }
    }
    return null;
  }

  /**
   * What the server answers one request with: a status and a generated body.
   *
   * @param status the HTTP status
   * @param length the body length in bytes, or -1 for an endless body
   * @param declareLength whether to send Content-Length (otherwise the body is chunked)
   * @param gateAfter after this many body bytes, wait for {@link #release()}; -1 for never
   * @param byteInterval the pause before each body byte, for a body that trickles in real time;
   *     {@link Duration#ZERO} to write the body as fast as the client reads
   */
  public record Reply(int status, long length, boolean declareLength, long gateAfter, Duration byteInterval) {
    /**
     * Checks the components.
     *
     * @param status the HTTP status
     * @param length the body length; -1 for endless
     * @param declareLength whether Content-Length is sent
     * @param gateAfter bytes before the gate, or -1
     * @param byteInterval the pause before each byte, zero or positive
     * @throws IllegalArgumentException if {@code byteInterval} is negative
     */
    public Reply {
      java.util.Objects.requireNonNull(byteInterval, "byteInterval");
      if (byteInterval.isNegative()) {
        throw new IllegalArgumentException("byteInterval must not be negative: " + byteInterval);
      }
    }

    /**
     * A reply without a trickle.
     *
     * @param status the HTTP status
     * @param length the body length; -1 for endless
     * @param declareLength whether Content-Length is sent
     * @param gateAfter bytes before the gate, or -1
     */
    public Reply(int status, long length, boolean declareLength, long gateAfter) {
      this(status, length, declareLength, gateAfter, Duration.ZERO);
    }

    /**
     * A body of {@code length} bytes.
     *
     * @param status the HTTP status
     * @param length the body length; -1 for endless
     * @param declareLength whether Content-Length is sent (otherwise chunked)
     * @return the reply
     */
    public static Reply of(int status, long length, boolean declareLength) {
      return new Reply(status, length, declareLength, -1);
    }

    /**
     * This reply, waiting for {@link #release()} after {@code bytes} body bytes: a body that
     * trickles, and that cannot finish before the client says it got the response.
     *
     * @param bytes how many body bytes go out before the wait
     * @return the gated reply
     */
    public Reply gatedAfter(long bytes) {
      return new Reply(status, length, declareLength, bytes, byteInterval);
    }

    /**
     * This reply, its body sent one byte at a time with {@code interval} before each byte (the
     * headers go out at once): a body that arrives in time for every read timeout and takes
     * {@code length × interval} in all. This is real time on the connection's thread; keep both
     * small in tests.
     *
     * @param interval the pause before each byte; positive
     * @return the trickling reply
     * @throws IllegalArgumentException if {@code interval} is not positive
     */
    public Reply trickled(Duration interval) {
      if (interval.isZero() || interval.isNegative()) {
        throw new IllegalArgumentException("interval must be positive: " + interval);
      }
      return new Reply(status, length, declareLength, gateAfter, interval);
    }
  }
}
