/** Small programs to copy: Retrofit, java.net.http, resume on restart, a custom policy. */
package dev.idem.examples.samples;
