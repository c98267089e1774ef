/** A decorator of java.net.http.HttpClient, sync and async. Work pending (issue 3). */
package dev.idem.httpclient;
