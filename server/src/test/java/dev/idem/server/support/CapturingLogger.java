package dev.idem.server.support;

import java.util.ArrayList;
import java.util.List;
import org.slf4j.Marker;
import org.slf4j.event.Level;
import org.slf4j.helpers.LegacyAbstractLogger;
import org.slf4j.helpers.MessageFormatter;

/** An SLF4J {@code Logger} that keeps what it is given, for a test to read; every level enabled. */
public final class CapturingLogger extends LegacyAbstractLogger {
  private static final long serialVersionUID = 1L;

  /** One line as logged: its level, its formatted message and the throwable given with it, or null. */
  public record Line(Level level, String message, Throwable throwable) {
  }

  private final List<Line> lines = new ArrayList<>();

  public CapturingLogger() {
    this.name = "capturing";
  }

  /** What was logged so far, oldest first. */
  public synchronized List<Line> lines() {
    return List.copyOf(lines);
  }

  @Override
  protected synchronized void handleNormalizedLoggingCall(Level level, Marker marker, String messagePattern,
      Object[] arguments, Throwable throwable) {
    lines.add(new Line(level, MessageFormatter.basicArrayFormat(messagePattern, arguments), throwable));
  }

  @Override
  protected String getFullyQualifiedCallerName() {
    return null;
  }

  @Override
  public boolean isTraceEnabled() {
    return true;
  }

  @Override
  public boolean isDebugEnabled() {
    return true;
  }

  @Override
  public boolean isInfoEnabled() {
    return true;
  }

  @Override
  public boolean isWarnEnabled() {
    return true;
  }

  @Override
  public boolean isErrorEnabled() {
    return true;
  }
}
