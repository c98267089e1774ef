package dev.idem.core.internal;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;

/**
 * A generated JSON value that can be spelled in many ways: compact and canonical, or (sloppy)
 * with whitespace, shuffled members and any valid escape. Its numbers are drawn from a list of
 * spellings (1e2, 1E+2, 100.000, -0.0, 1e400...), and one object in ten repeats a member name.
 * For the canonicalizer's property tests.
 */
interface GeneratedJson {
  String spell(Random r, boolean sloppy);

  boolean plainKeys();

  int depth();

  String[] KEYS = {"a", "b", "B", "amount", "currency", "", "aa", "a b", "z\n", "\u00e9", "\u4e2d", "\ud83d\ude00",
      "\ue000", "\"", "a\\", "A", "_", "1"};
  String[] NUMBERS = {"0", "-0", "1", "-1", "4200", "1.0", "1e2", "1E+2", "0.1", "0.30000000000000004", "1e21",
      "1e+21", "1e-7", "0.000001", "123456789012345", "1234567890123456", "9007199254740993", "-1.5", "2e23",
      "5e-324", "1.7976931348623157e308", "12e-400", "100.000", "4.50", "-0.0", "1e400", "0e10", "333333333.33333329"};
  String CHARS = "aZ09 \"\\/\b\f\n\r\t\u0000\u001f\u007f\u00e9\u2028\u4e2d\ud83d\ude00\ue000";

  static GeneratedJson value(Random r, int depth) {
    int kind = r.nextInt(depth > 0 ? 7 : 5);
    return switch (kind) {
      case 0 -> literal(NUMBERS[r.nextInt(NUMBERS.length)]);
      case 1 -> string(randomString(r));
      case 2 -> literal(r.nextBoolean() ? "true" : "false");
      case 3 -> literal("null");
      case 4 -> literal(NUMBERS[r.nextInt(NUMBERS.length)]);
      case 5 -> {
        List<GeneratedJson> items = new ArrayList<>();
        for (int i = r.nextInt(4); i > 0; i--) {
          items.add(value(r, depth - 1));
        }
        yield array(items);
      }
      default -> {
        TreeMap<String, GeneratedJson> members = new TreeMap<>();
        for (int i = r.nextInt(5); i > 0; i--) {
          members.put(r.nextInt(3) == 0 ? randomString(r) : KEYS[r.nextInt(KEYS.length)], value(r, depth - 1));
        }
        yield object(members, r.nextInt(10) == 0);
      }
    };
  }

  private static String randomString(Random r) {
    StringBuilder s = new StringBuilder();
    for (int i = r.nextInt(6); i > 0; i--) {
      int k = r.nextInt(CHARS.length());
      char c = CHARS.charAt(k);
      if (Character.isHighSurrogate(c)) {
        s.append(c).append(CHARS.charAt(k + 1));
      } else if (!Character.isLowSurrogate(c)) {
        s.append(c);
      }
    }
    return s.toString();
  }

  private static GeneratedJson literal(String text) {
    return new GeneratedJson() {
      public String spell(Random r, boolean sloppy) {
        return text;
      }

      public boolean plainKeys() {
        return true;
      }

      public int depth() {
        return 0;
      }
    };
  }

  private static GeneratedJson string(String value) {
    return new GeneratedJson() {
      public String spell(Random r, boolean sloppy) {
        return quote(value, r, sloppy);
      }

      public boolean plainKeys() {
        return true;
      }

      public int depth() {
        return 0;
      }
    };
  }

  private static GeneratedJson array(List<GeneratedJson> items) {
    return new GeneratedJson() {
      public String spell(Random r, boolean sloppy) {
        StringBuilder s = new StringBuilder("[");
        for (int i = 0; i < items.size(); i++) {
          s.append(i > 0 ? "," : "").append(space(r, sloppy)).append(items.get(i).spell(r, sloppy))
              .append(space(r, sloppy));
        }
        return s.append(']').toString();
      }

      public boolean plainKeys() {
        return items.stream().allMatch(GeneratedJson::plainKeys);
      }

      public int depth() {
        return 1 + items.stream().mapToInt(GeneratedJson::depth).max().orElse(0);
      }
    };
  }

  private static GeneratedJson object(TreeMap<String, GeneratedJson> members, boolean duplicate) {
    return new GeneratedJson() {
      public String spell(Random r, boolean sloppy) {
        List<String> keys = new ArrayList<>(members.keySet());
        if (sloppy || r.nextInt(4) == 0) {
          Collections.shuffle(keys, r);
        }
        if (duplicate && !keys.isEmpty()) {
          keys.add(keys.get(0));
        }
        StringBuilder s = new StringBuilder("{");
        for (int i = 0; i < keys.size(); i++) {
          s.append(i > 0 ? "," : "").append(space(r, sloppy)).append(quote(keys.get(i), r, sloppy))
              .append(space(r, sloppy)).append(':').append(space(r, sloppy))
              .append(members.get(keys.get(i)).spell(r, sloppy));
        }
        return s.append(space(r, sloppy)).append('}').toString();
      }

      public boolean plainKeys() {
        return members.keySet().stream().allMatch(k -> k.chars().allMatch(c -> c >= 0x20 && c < 0x7f
            && c != '"' && c != '\\')) && members.values().stream().allMatch(GeneratedJson::plainKeys);
      }

      public int depth() {
        return 1 + members.values().stream().mapToInt(GeneratedJson::depth).max().orElse(0);
      }
    };
  }

  private static String space(Random r, boolean sloppy) {
    return sloppy && r.nextInt(3) == 0 ? " \n\t\r".substring(r.nextInt(4), 4) : "";
  }

  /** Minimal escaping, or (sloppy) any valid escape for any character. */
  private static String quote(String value, Random r, boolean sloppy) {
    StringBuilder s = new StringBuilder("\"");
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (sloppy && r.nextInt(4) == 0) {
        String hex = String.format("%04x", (int) c);
        s.append("\\u").append(r.nextBoolean() ? hex : hex.toUpperCase(java.util.Locale.ROOT));
        continue;
      }
      switch (c) {
        case '"' -> s.append("\\\"");
        case '\\' -> s.append("\\\\");
        case '/' -> s.append(sloppy && r.nextBoolean() ? "\\/" : "/");
        case '\b' -> s.append("\\b");
        case '\f' -> s.append("\\f");
        case '\n' -> s.append("\\n");
        case '\r' -> s.append("\\r");
        case '\t' -> s.append("\\t");
        default -> {
          if (c < 0x20) {
            s.append(String.format("\\u%04x", (int) c));
          } else {
            s.append(c);
          }
        }
      }
    }
    return s.append('"').toString();
  }
}
