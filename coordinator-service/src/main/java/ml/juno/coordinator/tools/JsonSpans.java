package ml.juno.coordinator.tools;

/** Finds where a JSON object or array that starts at a given index ends, minding strings and escapes. */
final class JsonSpans {
    private JsonSpans() {
    }

    /** The index just after the object/array starting at {@code start}, or -1 if it does not close. */
    static int end(String s, int start) {
        if (start >= s.length() || (s.charAt(start) != '{' && s.charAt(start) != '[')) {
            return -1;
        }
        int depth = 0;
        boolean inString = false;
        for (int i = start; i < s.length(); i++) {
            char c = s.charAt(i);
            if (inString) {
                if (c == '\\') {
                    i++;
                } else if (c == '"') {
                    inString = false;
                }
            } else if (c == '"') {
                inString = true;
            } else if (c == '{' || c == '[') {
                depth++;
            } else if (c == '}' || c == ']') {
                if (--depth == 0) {
                    return i + 1;
                }
            }
        }
        return -1;
    }
}
