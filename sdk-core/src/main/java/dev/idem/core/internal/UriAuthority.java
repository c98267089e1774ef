package dev.idem.core.internal;

import java.net.URI;

/**
 * A request URI's host, port and user info, read from its raw authority when {@link URI} could
 * not: a host that is not a valid DNS name (an underscore, as in a docker-compose service name
 * such as {@code payments_api}, which OkHttp accepts) makes {@code URI} fall back to a
 * registry-based authority, and then {@link URI#getHost()}, {@link URI#getPort()} and
 * {@link URI#getRawUserInfo()} all say "none", though {@code svc:password@payments_api:8080} is
 * still there. Whoever labels, keys, shows or checks a URI by its parts asks here, so that such a
 * URI neither hides its user info from the secret check nor shows it as a host.
 *
 * <p>The common URI (a server-based authority) is answered from {@code URI}'s own fields, with no
 * allocation; only a registry-based one is parsed. Stateless and thread-safe.
 */
public final class UriAuthority {
  private UriAuthority() {}

  /**
   * Whether the URI carries user info, whether or not {@code URI} parsed its authority as a host.
   *
   * @param uri any URI
   * @return true if the authority has anything before an {@code @}
   */
  public static boolean hasUserInfo(URI uri) {
    if (uri.getRawUserInfo() != null) {
      return true;
    }
    if (uri.getHost() != null) {
      return false; // server-based, and no user info
    }
    String authority = uri.getRawAuthority();
    return authority != null && authority.indexOf('@') >= 0;
  }

  /**
   * The host, without user info or port: {@link URI#getHost()}, or for a registry-based authority
   * what follows its last {@code @} up to the port.
   *
   * @param uri any URI
   * @return the host as written (raw, case kept), or null if the URI has no authority
   */
  public static String host(URI uri) {
    String host = uri.getHost();
    if (host != null) {
      return host;
    }
    String hostPort = registryHostPort(uri);
    if (hostPort == null) {
      return null;
    }
    int colon = portColon(hostPort);
    return colon < 0 ? hostPort : hostPort.substring(0, colon);
  }

  /**
   * The explicit port: {@link URI#getPort()}, or for a registry-based authority the digits after
   * the host's last {@code :}.
   *
   * @param uri any URI
   * @return the port, or -1 if none is written
   */
  public static int port(URI uri) {
    if (uri.getHost() != null) {
      return uri.getPort();
    }
    String hostPort = registryHostPort(uri);
    int colon = hostPort == null ? -1 : portColon(hostPort);
    if (colon < 0 || colon == hostPort.length() - 1) {
      return -1;
    }
    try {
      return Integer.parseInt(hostPort.substring(colon + 1));
    } catch (NumberFormatException e) {
      return -1; // portColon checked the digits; only an overflow lands here
    }
  }

  /**
   * The URI as a message or a log line may show it: scheme, host, port and path, never user info,
   * query or fragment, any of which may carry a credential, and the path with the values of its
   * credential-named parameters redacted ({@link UrlCredentials#redactPath}). A relative URI shows
   * what it has of these; an opaque one only its scheme.
   *
   * @param uri any URI
   * @return for example {@code https://api.example.com:8443/v1/orders}
   */
  public static String redacted(URI uri) {
    StringBuilder b = new StringBuilder(64);
    if (uri.getScheme() != null) {
      b.append(uri.getScheme()).append(':');
    }
    if (uri.isOpaque()) {
      return b.toString();
    }
    String host = host(uri);
    if (host != null) {
      b.append("//").append(host);
      int port = port(uri);
      if (port >= 0) {
        b.append(':').append(port);
      }
    }
    String path = uri.getRawPath();
    // A path segment may carry a session id (;jsessionid=): the default rule, as no settings are known here.
    return path == null ? b.toString() : b.append(UrlCredentials.defaults().redactPath(path)).toString();
  }

  /**
   * The URI without its fragment. HTTP clients never send a fragment, so it is no part of the
   * request on the wire; the same instance when it has none.
   *
   * @param uri any URI
   * @return {@code uri} itself if it has no fragment, else an equal URI up to the fragment
   */
  public static URI withoutFragment(URI uri) {
    if (uri.getRawFragment() == null) {
      return uri;
    }
    String text = uri.toString();
    // The first '#' ends the URI proper: nothing before the fragment may hold one unescaped.
    return URI.create(text.substring(0, text.indexOf('#')));
  }

  /** A registry-based authority without its user info; null for a server-based one or none. */
  private static String registryHostPort(URI uri) {
    String authority = uri.getRawAuthority();
    if (authority == null) {
      return null;
    }
    // The user info ends at the last '@': a host never holds one, user info may (user@corp:pw@host).
    return authority.substring(authority.lastIndexOf('@') + 1);
  }

  /** The index of the ':' before a port (digits only, possibly none), or -1 if there is none. */
  private static int portColon(String hostPort) {
    int colon = hostPort.lastIndexOf(':');
    if (colon < 0 || colon < hostPort.lastIndexOf(']')) {
      return -1; // no port, or a colon inside an IPv6 literal
    }
    for (int i = colon + 1; i < hostPort.length(); i++) {
      char c = hostPort.charAt(i);
      if (c < '0' || c > '9') {
        return -1;
      }
    }
    return colon;
  }
}
