/** The Spring Boot sample app (the README's Spring Boot quickstart); not published. */
package dev.idem.examples.spring;
