/** What only Boot 4.0 needs (its health API); loaded only when that API is on the class path. Not API. */
package dev.idem.spring.internal.boot4;
