package ml.juno.coordinator.grammar;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * GBNF text → {@link Grammar}. The syntax is llama.cpp's ({@code grammars/README.md} there): {@code name ::= body};
 * a body is alternatives separated by {@code |}, each a sequence of string literals, character classes, {@code .},
 * rule names and parenthesised groups, each optionally followed by {@code * + ? {m} {m,} {m,n}}; {@code #} starts
 * a comment. A rule ends where the next {@code name ::=} starts (so bodies may span lines), which accepts every
 * grammar llama.cpp accepts. Groups and repetitions become helper rules named {@code rule~N}.
 */
final class GbnfParser {
    static final int MAX_REPEAT = 100_000;
    static final int MAX_ELEMENTS = 4_000_000;
    static final int MAX_CODE_POINT = 0x10FFFF;

    private final String src;
    private int pos;
    private final List<String> names = new ArrayList<>();
    private final Map<String, Integer> byName = new HashMap<>();
    private final List<List<int[]>> bodies = new ArrayList<>(); // null while only referenced
    private final Map<Integer, Integer> firstUse = new HashMap<>(); // rule → source offset of its first reference
    private final List<int[]> classes = new ArrayList<>();       // sorted, merged [lo, hi] pairs
    private final Map<String, Integer> classIds = new HashMap<>();
    private final Map<String, Integer> starOf = new HashMap<>(); // element → its e* helper rule, shared
    private int helpers;
    private long elements;

    private GbnfParser(String src) {
        this.src = src;
    }

    static Grammar parse(String gbnf, String rootName) {
        if (gbnf == null || gbnf.isBlank()) {
            throw new GrammarException("the grammar is empty");
        }
        GbnfParser p = new GbnfParser(gbnf);
        p.parseRules();
        return p.build(rootName);
    }

    // ---- parsing ----

    private void parseRules() {
        skipSpace();
        while (pos < src.length()) {
            int at = pos;
            String name = identifier();
            if (name == null) {
                throw error("expected a rule name");
            }
            skipSpace();
            if (!src.startsWith("::=", pos)) {
                throw error("expected '::=' after rule name '" + name + "'");
            }
            pos += 3;
            int rule = ruleId(name);
            if (bodies.get(rule) != null) {
                pos = at;
                throw error("rule '" + name + "' is defined twice");
            }
            List<int[]> alts = alternatives(name, false);
            bodies.set(rule, alts);
        }
    }

    private List<int[]> alternatives(String ctx, boolean nested) {
        List<int[]> alts = new ArrayList<>();
        alts.add(sequence(ctx, nested));
        while (pos < src.length() && src.charAt(pos) == '|') {
            pos++;
            alts.add(sequence(ctx, nested));
        }
        return alts;
    }

    private int[] sequence(String ctx, boolean nested) {
        IntBuf seq = new IntBuf();
        while (true) {
            skipSpace();
            if (pos >= src.length()) {
                break;
            }
            char c = src.charAt(pos);
            if (c == '|' || (nested && c == ')')) {
                break;
            }
            if (c == ')') {
                throw error("unmatched ')'");
            }
            if (isNameChar(c) && startsRuleDefinition()) {
                if (nested) {
                    throw error("missing ')' before the next rule");
                }
                break;
            }
            int atomStart = seq.size;
            atom(ctx, seq);
            skipSpace();
            if (pos < src.length()) {
                char op = src.charAt(pos);
                if (op == '*' || op == '+' || op == '?' || op == '{') {
                    int[] atomElems = Arrays.copyOfRange(seq.data, atomStart, seq.size);
                    seq.size = atomStart;
                    repeat(ctx, atomElems, seq);
                }
            }
        }
        elements += seq.size + 1;
        if (elements > MAX_ELEMENTS) {
            throw error("the grammar is too large (more than " + MAX_ELEMENTS + " elements once repetitions are expanded)");
        }
        return seq.toArray();
    }

    private void atom(String ctx, IntBuf out) {
        char c = src.charAt(pos);
        if (c == '"') {
            pos++;
            while (true) {
                if (pos >= src.length()) {
                    throw error("unterminated string literal");
                }
                if (src.charAt(pos) == '"') {
                    pos++;
                    return;
                }
                if (src.charAt(pos) == '\n') {
                    throw error("newline inside a string literal (write \\n)");
                }
                int cp = literalChar();
                out.add(classOf(new int[] {cp, cp}));
            }
        } else if (c == '[') {
            out.add(charClass());
        } else if (c == '.') {
            pos++;
            out.add(classOf(new int[] {0, MAX_CODE_POINT}));
        } else if (c == '(') {
            pos++;
            int helper = helperRule(ctx);
            List<int[]> alts = alternatives(ctx, true);
            if (pos >= src.length() || src.charAt(pos) != ')') {
                throw error("missing ')'");
            }
            pos++;
            bodies.set(helper, alts);
            out.add(ref(helper));
        } else if (isNameChar(c)) {
            int at = pos;
            String name = identifier();
            int rule = ruleId(name);
            firstUse.putIfAbsent(rule, at);
            out.add(ref(rule));
        } else if (c == '<') {
            throw error("token references (<[id]>, <token>) are not supported");
        } else {
            throw error("unexpected '" + printable(src.codePointAt(pos)) + "'");
        }
    }

    private void repeat(String ctx, int[] atom, IntBuf out) {
        char op = src.charAt(pos);
        int min;
        int max; // -1: unbounded
        if (op == '*') {
            pos++;
            min = 0;
            max = -1;
        } else if (op == '+') {
            pos++;
            min = 1;
            max = -1;
        } else if (op == '?') {
            pos++;
            min = 0;
            max = 1;
        } else {
            pos++;
            skipInlineSpace();
            min = number();
            skipInlineSpace();
            if (pos < src.length() && src.charAt(pos) == ',') {
                pos++;
                skipInlineSpace();
                max = pos < src.length() && Character.isDigit(src.charAt(pos)) ? number() : -1;
                skipInlineSpace();
            } else {
                max = min;
            }
            if (pos >= src.length() || src.charAt(pos) != '}') {
                throw error("expected '}' to close the repetition");
            }
            pos++;
            if (max != -1 && max < min) {
                throw error("repetition {" + min + "," + max + "}: the maximum is below the minimum");
            }
        }
        if (atom.length == 0) {
            return; // "" repeated is still ""
        }
        int e = atom.length == 1 ? atom[0] : ref(wrap(ctx, atom));
        for (int i = 0; i < min; i++) {
            out.add(e);
        }
        if (max == -1) {
            out.add(ref(star(ctx, e)));
        } else if (max > min) {
            // (e (e (e)?)?)? : k nested optionals, unambiguous
            int next = -1;
            for (int k = 0; k < max - min; k++) {
                int opt = helperRule(ctx);
                bodies.set(opt, List.of(next < 0 ? new int[] {e} : new int[] {e, ref(next)}, new int[0]));
                elements += 4;
                next = opt;
            }
            out.add(ref(next));
        }
        if (elements > MAX_ELEMENTS) {
            throw error("the grammar is too large (more than " + MAX_ELEMENTS + " elements once repetitions are expanded)");
        }
    }

    private int wrap(String ctx, int[] seq) {
        int r = helperRule(ctx);
        bodies.set(r, List.<int[]>of(seq));
        return r;
    }

    /** S ::= e S | "" (right recursion: the matcher's tail calls keep its stacks flat). */
    private int star(String ctx, int e) {
        String key = ctx + "/" + e;
        Integer known = starOf.get(key);
        if (known != null) {
            return known;
        }
        int s = helperRule(ctx);
        bodies.set(s, List.of(new int[] {e, ref(s)}, new int[0]));
        elements += 4;
        starOf.put(key, s);
        return s;
    }

    private int charClass() {
        int open = pos;
        pos++; // [
        boolean negated = false;
        if (pos < src.length() && src.charAt(pos) == '^') {
            negated = true;
            pos++;
        }
        IntBuf r = new IntBuf();
        while (true) {
            if (pos >= src.length()) {
                pos = open;
                throw error("unterminated character class");
            }
            if (src.charAt(pos) == ']') {
                pos++;
                break;
            }
            int lo = classChar();
            int hi = lo;
            if (pos + 1 < src.length() && src.charAt(pos) == '-' && src.charAt(pos + 1) != ']') {
                pos++;
                hi = classChar();
                if (hi < lo) {
                    throw error("character range " + printable(lo) + "-" + printable(hi) + " is backwards");
                }
            }
            r.add(lo);
            r.add(hi);
        }
        int[] merged = merge(r.toArray());
        return classOf(negated ? complement(merged) : merged);
    }

    private int classChar() {
        return literalChar();
    }

    /** One character of a literal or class, escapes decoded. */
    private int literalChar() {
        int cp = src.codePointAt(pos);
        if (cp != '\\') {
            pos += Character.charCount(cp);
            return cp;
        }
        if (pos + 1 >= src.length()) {
            throw error("dangling '\\'");
        }
        char e = src.charAt(pos + 1);
        pos += 2;
        return switch (e) {
            case 'n' -> '\n';
            case 'r' -> '\r';
            case 't' -> '\t';
            case '\\', '"', '[', ']', '-', '^', '/', '\'' -> e;
            case 'x' -> hex(2);
            case 'u' -> hex(4);
            case 'U' -> hex(8);
            default -> {
                pos -= 2;
                throw error("unknown escape '\\" + e + "'");
            }
        };
    }

    private int hex(int digits) {
        if (pos + digits > src.length()) {
            throw error("expected " + digits + " hex digits");
        }
        int v = 0;
        for (int i = 0; i < digits; i++) {
            int d = Character.digit(src.charAt(pos + i), 16);
            if (d < 0) {
                throw error("expected " + digits + " hex digits");
            }
            v = v * 16 + d;
        }
        if (v > MAX_CODE_POINT || v < 0) {
            throw error("code point " + Integer.toHexString(v) + " is beyond U+10FFFF");
        }
        pos += digits;
        return v;
    }

    private int number() {
        int start = pos;
        while (pos < src.length() && Character.isDigit(src.charAt(pos))) {
            pos++;
        }
        if (start == pos) {
            throw error("expected a number in the repetition");
        }
        if (pos - start > 6 || Integer.parseInt(src, start, pos, 10) > MAX_REPEAT) {
            pos = start;
            throw error("repetition count above " + MAX_REPEAT);
        }
        return Integer.parseInt(src, start, pos, 10);
    }

    private String identifier() {
        int start = pos;
        while (pos < src.length() && isNameChar(src.charAt(pos))) {
            pos++;
        }
        return pos == start ? null : src.substring(start, pos);
    }

    private boolean startsRuleDefinition() {
        int p = pos;
        while (p < src.length() && isNameChar(src.charAt(p))) {
            p++;
        }
        while (p < src.length() && (src.charAt(p) == ' ' || src.charAt(p) == '\t' || src.charAt(p) == '\r' || src.charAt(p) == '\n')) {
            p++;
        }
        return src.startsWith("::=", p);
    }

    private static boolean isNameChar(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    }

    private void skipSpace() {
        while (pos < src.length()) {
            char c = src.charAt(pos);
            if (c == '#') {
                while (pos < src.length() && src.charAt(pos) != '\n') {
                    pos++;
                }
            } else if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
                pos++;
            } else {
                return;
            }
        }
    }

    private void skipInlineSpace() {
        while (pos < src.length() && (src.charAt(pos) == ' ' || src.charAt(pos) == '\t')) {
            pos++;
        }
    }

    private GrammarException error(String what) {
        int line = 1;
        int col = 1;
        for (int i = 0; i < Math.min(pos, src.length()); i++) {
            if (src.charAt(i) == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
        }
        return new GrammarException("grammar error at line " + line + ", column " + col + ": " + what);
    }

    private static String printable(int cp) {
        return cp >= 0x20 && cp < 0x7F ? String.valueOf((char) cp) : String.format("\\u%04X", cp);
    }

    // ---- rules and classes ----

    private int ruleId(String name) {
        Integer id = byName.get(name);
        if (id != null) {
            return id;
        }
        names.add(name);
        bodies.add(null);
        byName.put(name, names.size() - 1);
        return names.size() - 1;
    }

    private int helperRule(String ctx) {
        String name = ctx + "~" + (++helpers);
        names.add(name);
        bodies.add(null);
        return names.size() - 1;
    }

    private static int ref(int rule) {
        return -(rule + 2);
    }

    private int classOf(int[] ranges) {
        String key = Arrays.toString(ranges);
        Integer id = classIds.get(key);
        if (id != null) {
            return id;
        }
        classes.add(ranges);
        classIds.put(key, classes.size() - 1);
        return classes.size() - 1;
    }

    static int[] merge(int[] pairs) {
        int n = pairs.length / 2;
        long[] packed = new long[n];
        for (int i = 0; i < n; i++) {
            packed[i] = ((long) pairs[2 * i] << 32) | pairs[2 * i + 1];
        }
        Arrays.sort(packed);
        IntBuf out = new IntBuf();
        for (long p : packed) {
            int lo = (int) (p >>> 32);
            int hi = (int) p;
            if (out.size > 0 && lo <= out.data[out.size - 1] + 1) {
                out.data[out.size - 1] = Math.max(out.data[out.size - 1], hi);
            } else {
                out.add(lo);
                out.add(hi);
            }
        }
        return out.toArray();
    }

    static int[] complement(int[] merged) {
        IntBuf out = new IntBuf();
        int next = 0;
        for (int i = 0; i < merged.length; i += 2) {
            if (merged[i] > next) {
                out.add(next);
                out.add(merged[i] - 1);
            }
            next = merged[i + 1] + 1;
        }
        if (next <= MAX_CODE_POINT) {
            out.add(next);
            out.add(MAX_CODE_POINT);
        }
        return out.toArray();
    }

    // ---- checks and flattening ----

    private Grammar build(String rootName) {
        Integer root = byName.get(rootName);
        if (root == null || bodies.get(root) == null) {
            throw new GrammarException("the grammar has no '" + rootName + "' rule (the start rule)");
        }
        for (int r = 0; r < names.size(); r++) {
            if (bodies.get(r) == null) {
                pos = firstUse.getOrDefault(r, 0);
                throw error("rule '" + names.get(r) + "' is used but never defined");
            }
        }
        int rules = names.size();
        boolean[] nullable = nullable(rules);
        checkLeftRecursion(rules, nullable);

        int alts = 0;
        int size = 0;
        for (List<int[]> b : bodies) {
            alts += b.size();
            for (int[] a : b) {
                size += a.length + 1;
            }
        }
        int[] code = new int[size];
        int[] altStart = new int[alts];
        int[] ruleAlt = new int[rules + 1];
        int c = 0;
        int a = 0;
        for (int r = 0; r < rules; r++) {
            ruleAlt[r] = a;
            for (int[] seq : bodies.get(r)) {
                altStart[a++] = c;
                System.arraycopy(seq, 0, code, c, seq.length);
                c += seq.length;
                code[c++] = Grammar.END;
            }
        }
        ruleAlt[rules] = a;
        long[] ascii = new long[classes.size() * 2];
        int[][] high = new int[classes.size()][];
        for (int k = 0; k < classes.size(); k++) {
            int[] r = classes.get(k);
            IntBuf hi = new IntBuf();
            for (int i = 0; i < r.length; i += 2) {
                for (int cp = r[i]; cp <= Math.min(r[i + 1], 127); cp++) {
                    ascii[2 * k + (cp >>> 6)] |= 1L << (cp & 63);
                }
                if (r[i + 1] >= 128) {
                    hi.add(Math.max(128, r[i]));
                    hi.add(r[i + 1]);
                }
            }
            high[k] = hi.toArray();
        }
        return new Grammar(code, altStart, ruleAlt, root, ascii, high, names.toArray(String[]::new), src);
    }

    private boolean[] nullable(int rules) {
        boolean[] nullable = new boolean[rules];
        boolean changed = true;
        while (changed) {
            changed = false;
            for (int r = 0; r < rules; r++) {
                if (nullable[r]) {
                    continue;
                }
                for (int[] seq : bodies.get(r)) {
                    boolean all = true;
                    for (int e : seq) {
                        if (e >= 0 || !nullable[-e - 2]) {
                            all = false;
                            break;
                        }
                    }
                    if (all) {
                        nullable[r] = true;
                        changed = true;
                        break;
                    }
                }
            }
        }
        return nullable;
    }

    /** A rule that can call itself before consuming a character would make the matcher expand forever. */
    private void checkLeftRecursion(int rules, boolean[] nullable) {
        int[][] left = new int[rules][];
        for (int r = 0; r < rules; r++) {
            IntBuf calls = new IntBuf();
            for (int[] seq : bodies.get(r)) {
                for (int e : seq) {
                    if (e >= 0) {
                        break;
                    }
                    calls.add(-e - 2);
                    if (!nullable[-e - 2]) {
                        break;
                    }
                }
            }
            left[r] = calls.toArray();
        }
        byte[] color = new byte[rules]; // 0 new, 1 on the path, 2 done
        int[] stack = new int[rules];
        int[] next = new int[rules];
        for (int start = 0; start < rules; start++) {
            if (color[start] != 0) {
                continue;
            }
            int depth = 0;
            stack[0] = start;
            next[0] = 0;
            color[start] = 1;
            while (depth >= 0) {
                int r = stack[depth];
                if (next[depth] < left[r].length) {
                    int s = left[r][next[depth]++];
                    if (color[s] == 1) {
                        throw new GrammarException("grammar error: rule '" + userName(s)
                                + "' is left-recursive (it can reach itself before matching any character)");
                    }
                    if (color[s] == 0) {
                        color[s] = 1;
                        stack[++depth] = s;
                        next[depth] = 0;
                    }
                } else {
                    color[r] = 2;
                    depth--;
                }
            }
        }
    }

    private String userName(int rule) {
        String n = names.get(rule);
        int t = n.indexOf('~');
        return t < 0 ? n : n.substring(0, t) + "' (a group or repetition in rule '" + n.substring(0, t);
    }

    /** A growable int array. */
    static final class IntBuf {
        int[] data = new int[8];
        int size;

        void add(int v) {
            if (size == data.length) {
                data = Arrays.copyOf(data, size * 2);
            }
            data[size++] = v;
        }

        int[] toArray() {
            return Arrays.copyOf(data, size);
        }
    }
}
