package dev.idem.server;

/**
 * What a key is unique within. Seed 000: two tenants may pick the same random key, and one key
 * must not collide between {@code POST /orders} and {@code POST /refunds}, so the default scopes a
 * key by both.
 */
public enum KeyScope {
  /** One key space per caller, shared by every route of that caller. */
  CALLER,
  /** One key space per route, shared by every caller. */
  ROUTE,
  /** One key space per caller and route. The default. */
  CALLER_AND_ROUTE;

  RecordId id(String caller, String route, String key) {
    return switch (this) {
      case CALLER -> new RecordId(caller, "*", key);
      case ROUTE -> new RecordId("*", route, key);
      case CALLER_AND_ROUTE -> new RecordId(caller, route, key);
    };
  }
}
