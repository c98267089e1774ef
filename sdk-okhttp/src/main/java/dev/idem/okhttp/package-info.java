/** OkHttp adapter: an application interceptor (so Retrofit works unchanged) and a small facade. Work pending (issue 3). */
package dev.idem.okhttp;
