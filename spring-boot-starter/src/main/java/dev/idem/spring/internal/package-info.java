/** Internals of the Spring Boot starter; not API. */
package dev.idem.spring.internal;
