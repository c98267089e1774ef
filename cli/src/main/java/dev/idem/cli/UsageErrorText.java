package dev.idem.cli;

import java.util.regex.Pattern;
import picocli.CommandLine.Model.CommandSpec;

/**
 * A usage error's message without the values the command line's options carried, where they may
 * be secrets. picocli quotes the arguments it refuses as they were typed: a mistyped
 * {@code --pasword=hunter2} is "Unknown option: '--pasword=hunter2'", and {@code --pasword hunter2}
 * is "Unknown options: '--pasword', 'hunter2'" (or, after {@code --user}, which takes
 * {@code --pasword} as its value, "Unmatched argument at index 6: 'hunter2'"). Standard error goes
 * into CI logs and cron mails, so such a value is shown as {@code ***}: the value after the
 * {@code =} of an option the failing command does not have, or of one whose name says it holds a
 * secret, and an argument that follows such an option on its own. The option's name stays, so the
 * operator sees which one is mistyped. Stateless.
 */
final class UsageErrorText {
  /** An option whose value is a secret even when it is typed right (picocli may quote it too). */
  private static final Pattern SECRET_NAME = Pattern.compile("(?i)pass|secret|token|credential");

  private UsageErrorText() {}

  /**
   * {@code message} with every value that {@code args} gave an unknown or secret option of
   * {@code command} shown as {@code ***}.
   *
   * @param message picocli's message for the usage error
   * @param command the command whose parse failed, which tells which options it knows
   * @param args the command line as given
   */
  static String withoutOptionValues(String message, CommandSpec command, String[] args) {
    String text = message;
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      if (arg == null || arg.isEmpty()) {
        continue;
      }
      if (isOption(arg)) {
        int eq = arg.indexOf('=');
        if (eq > 0 && hidesValue(arg.substring(0, eq), command)) {
          text = text.replace(arg, arg.substring(0, eq + 1) + "***");
        }
      } else if (i > 0 && isOption(args[i - 1]) && args[i - 1].indexOf('=') < 0 && hidesValue(args[i - 1], command)) {
        // Quoted, as picocli quotes an argument: a plain word such as "list" may be part of the
        // message's own text as well.
        text = text.replace("'" + arg + "'", "'***'");
      }
    }
    return text;
  }

  private static boolean isOption(String arg) {
    return arg != null && arg.length() > 1 && arg.startsWith("-") && !arg.equals("--");
  }

  /** Whether a value given to {@code name} may be a secret: the command has no such option, or it holds one. */
  private static boolean hidesValue(String name, CommandSpec command) {
    return command.findOption(name) == null || SECRET_NAME.matcher(name).find();
  }
}
