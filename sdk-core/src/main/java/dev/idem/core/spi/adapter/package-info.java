/**
 * What every HTTP adapter shares, for those who write one: the rules that decide how a request
 * becomes an operation and how an operation's ending becomes the adapter's answer. The OkHttp and
 * java.net.http adapters both use {@link dev.idem.core.spi.adapter.AdapterSupport}, so they agree
 * on the untagged policy, on untagged operation names, on a key header already on the request, on
 * the server's "key missing" answer and on the replay header; and both read and keep a response
 * body by {@link dev.idem.core.spi.adapter.CaptureRule}, under
 * {@link dev.idem.core.spi.adapter.CaptureDeadline}; and both tell a failure that came after the
 * request may have gone out by {@link dev.idem.core.spi.adapter.SentBefore}. Applications using an adapter never
 * name these types.
 */
package dev.idem.core.spi.adapter;
