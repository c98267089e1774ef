/**
 * The Spring Boot auto-configuration (Boot 3.5 and 4.0) and its {@code idem.*} properties. Exclude
 * a part by its class name ({@code spring.autoconfigure.exclude}); replace a bean by declaring one
 * of the same type. See docs/spring.md.
 */
package dev.idem.spring.autoconfigure;
