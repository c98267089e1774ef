package dev.idem.examples.readme;

import java.util.List;

/**
 * What a README snippet assumes and does not show: the imports of the names it uses, and the
 * app-side names (a journal built earlier, the app's interceptor, a Jetty context...) declared as
 * members of the class the snippet is compiled in.
 *
 * @param imports whole import lines, after the snippet's own
 * @param members fields, methods and nested types of the wrapper class
 * @param shape whether the snippet is a method body or class members (a test class's fields and
 *     methods)
 */
record Preamble(List<String> imports, List<String> members, Shape shape) {
  enum Shape {
    STATEMENTS,
    MEMBERS
  }

  Preamble {
    imports = List.copyOf(imports);
    members = List.copyOf(members);
  }

  /** The preamble of a block that needs none: it must compile on its own imports. */
  static final Preamble NONE = new Preamble(List.of(), List.of(), Shape.STATEMENTS);

  static Preamble statements(List<String> imports, List<String> members) {
    return new Preamble(imports, members, Shape.STATEMENTS);
  }

  static Preamble members(List<String> imports, List<String> members) {
    return new Preamble(imports, members, Shape.MEMBERS);
  }
}
