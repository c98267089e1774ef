package dev.idem.server.jdkhttp;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpContext;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpPrincipal;
import com.sun.net.httpserver.HttpsExchange;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import javax.net.ssl.SSLSession;

/**
 * The guard's exchange as an {@link HttpsExchange}, for a request an {@code HttpsServer} took: a
 * handler that reads the TLS session (a mutual-TLS API's client certificate) casts its exchange to
 * {@code HttpsExchange}, which the guard's own exchange alone is not. Everything but the session is
 * {@code view}'s; the session is the real exchange's.
 */
final class SecureExchangeView extends HttpsExchange {
  private final HttpExchange view;
  private final HttpsExchange real;

  SecureExchangeView(HttpExchange view, HttpsExchange real) {
    this.view = view;
    this.real = real;
  }

  @Override
  public SSLSession getSSLSession() {
    return real.getSSLSession();
  }

  @Override
  public Headers getRequestHeaders() {
    return view.getRequestHeaders();
  }

  @Override
  public Headers getResponseHeaders() {
    return view.getResponseHeaders();
  }

  @Override
  public URI getRequestURI() {
    return view.getRequestURI();
  }

  @Override
  public String getRequestMethod() {
    return view.getRequestMethod();
  }

  @Override
  public HttpContext getHttpContext() {
    return view.getHttpContext();
  }

  @Override
  public void close() {
    view.close();
  }

  @Override
  public InputStream getRequestBody() {
    return view.getRequestBody();
  }

  @Override
  public OutputStream getResponseBody() {
    return view.getResponseBody();
  }

  @Override
  public void sendResponseHeaders(int rCode, long responseLength) throws IOException {
    view.sendResponseHeaders(rCode, responseLength);
  }

  @Override
  public InetSocketAddress getRemoteAddress() {
    return view.getRemoteAddress();
  }

  @Override
  public int getResponseCode() {
    return view.getResponseCode();
  }

  @Override
  public InetSocketAddress getLocalAddress() {
    return view.getLocalAddress();
  }

  @Override
  public String getProtocol() {
    return view.getProtocol();
  }

  @Override
  public Object getAttribute(String name) {
    return view.getAttribute(name);
  }

  @Override
  public void setAttribute(String name, Object value) {
    view.setAttribute(name, value);
  }

  @Override
  public void setStreams(InputStream i, OutputStream o) {
    view.setStreams(i, o);
  }

  @Override
  public HttpPrincipal getPrincipal() {
    return view.getPrincipal();
  }
}
