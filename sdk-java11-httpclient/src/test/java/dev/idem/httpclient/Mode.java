package dev.idem.httpclient;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

/** Runs a scenario through {@code send} or through {@code sendAsync}. */
enum Mode {
  SYNC {
    @Override
    <T> IdempotentHttpResponse<T> send(Fixture f, OperationCall call, HttpRequest request,
        HttpResponse.BodyHandler<T> handler) throws Exception {
      return call.send(request, handler);
    }

    @Override
    <T> HttpResponse<T> plain(Fixture f, HttpRequest request, HttpResponse.BodyHandler<T> handler) throws Exception {
      return f.client.send(request, handler);
    }
  },
  ASYNC {
    @Override
    <T> IdempotentHttpResponse<T> send(Fixture f, OperationCall call, HttpRequest request,
        HttpResponse.BodyHandler<T> handler) throws Exception {
      return f.await(call.sendAsync(request, handler));
    }

    @Override
    <T> HttpResponse<T> plain(Fixture f, HttpRequest request, HttpResponse.BodyHandler<T> handler) throws Exception {
      return f.await(f.client.sendAsync(request, handler));
    }
  };

  abstract <T> IdempotentHttpResponse<T> send(Fixture f, OperationCall call, HttpRequest request,
      HttpResponse.BodyHandler<T> handler) throws Exception;

  abstract <T> HttpResponse<T> plain(Fixture f, HttpRequest request, HttpResponse.BodyHandler<T> handler)
      throws Exception;
}
