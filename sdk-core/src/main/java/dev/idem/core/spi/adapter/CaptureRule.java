package dev.idem.core.spi.adapter;

import dev.idem.core.spi.ResponseSnapshot;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What an adapter reads of a live response before the caller gets it, and what the journal keeps:
 * the same in every adapter (when to stop reading is {@link CaptureDeadline}).
 * <ul>
 *   <li><b>What is read</b> ({@link #readsBody}): the outcome comes from the status and the
 *       headers, so a 2xx body is read only when its declared length fits
 *       {@link ResponseSnapshot#MAX_CAPTURED_BODY} (then the journal keeps it whole); any other
 *       body is read up to the cap, because the classifier looks into it (a 400 naming the key);
 *       and a response nobody reads on (a resume after a restart) is read up to the cap whatever
 *       its status, since the journal is its only reader. Whatever was read goes on to the caller
 *       first, then the rest of the body as it arrives.</li>
 *   <li><b>What is kept</b> ({@link #snapshot}): the body if it arrived whole, within the cap and
 *       the deadline; otherwise an empty body marked {@link ResponseSnapshot#BODY_NOT_KEPT_HEADER}
 *       with the declared length, or {@code unknown}. A body that breaks off or runs out of time is
 *       not kept, and never turns the answered attempt into an unanswered one.</li>
 * </ul>
 * Stateless and thread-safe.
 */
public final class CaptureRule {
  private CaptureRule() {}

  /**
   * Whether to read the body for the journal before handing the response on.
   *
   * @param status the status code
   * @param declaredLength the declared {@code Content-Length}, or a negative number if unknown
   * @param nobodyReadsOn true for a response that no caller reads afterwards (a resume)
   * @return true to read it, up to {@link ResponseSnapshot#MAX_CAPTURED_BODY} + 1 bytes
   */
  public static boolean readsBody(int status, long declaredLength, boolean nobodyReadsOn) {
    boolean success = status >= 200 && status < 300;
    return nobodyReadsOn || !success || (declaredLength >= 0 && declaredLength <= ResponseSnapshot.MAX_CAPTURED_BODY);
  }

  /**
   * The journal's snapshot of a response.
   *
   * @param status the status code
   * @param headers the response's headers
   * @param wholeBody the body if all of it arrived within the deadline, or null if it was not read,
   *     broke off, ran out of time or proved longer than the cap
   * @param declaredLength the declared {@code Content-Length}, or a negative number if unknown
   * @return the snapshot, with the body, or with none and the marker header
   */
  public static ResponseSnapshot snapshot(int status, Map<String, List<String>> headers, byte[] wholeBody,
      long declaredLength) {
    if (wholeBody != null && wholeBody.length <= ResponseSnapshot.MAX_CAPTURED_BODY) {
      return new ResponseSnapshot(status, headers, wholeBody);
    }
    Map<String, List<String>> marked = new LinkedHashMap<>(headers);
    marked.put(ResponseSnapshot.BODY_NOT_KEPT_HEADER,
        List.of(declaredLength >= 0 ? Long.toString(declaredLength) : "unknown"));
    return new ResponseSnapshot(status, marked, new byte[0]);
  }
}
