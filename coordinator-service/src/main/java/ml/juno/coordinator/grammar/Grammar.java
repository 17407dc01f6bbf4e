package ml.juno.coordinator.grammar;

import java.nio.charset.StandardCharsets;

/**
 * A compiled context-free grammar over Unicode code points, ready for {@link GrammarMatcher}. Immutable and shared
 * by every sequence that decodes with it.
 *
 * <p>Shape: every rule is a list of alternatives, every alternative a sequence of elements ending in {@link #END}.
 * An element {@code >= 0} is a character class (an index into the class tables), an element {@code <= -2} calls rule
 * {@code -(e + 2)}. Repetitions and groups of the source were turned into helper rules by the parser, so the matcher
 * knows only sequences, alternatives and calls. Left recursion is refused at build time, which is what keeps the
 * matcher's expansion finite.
 *
 * <p>Made by {@link #parseGbnf(String)} (llama.cpp's GBNF), {@link #fromJsonSchema(String)} and
 * {@link #anyJsonObject()}.
 */
public final class Grammar {
    static final int END = -1;

    final int[] code;       // [elements] all alternatives of all rules, each ending in END
    final int[] altStart;   // [alternatives] offset of each alternative in code
    final int[] ruleAlt;    // [rules + 1] rule r's alternatives are altStart[ruleAlt[r] .. ruleAlt[r + 1])
    final int root;
    final long[] ascii;     // [classes * 2] code points 0..127 of each class, as a bitmap
    final int[][] ranges;   // [classes] the class's code points >= 128 as sorted, disjoint [lo, hi] pairs
    final String[] ruleNames;
    private final String source;

    Grammar(int[] code, int[] altStart, int[] ruleAlt, int root, long[] ascii, int[][] ranges, String[] ruleNames,
            String source) {
        this.code = code;
        this.altStart = altStart;
        this.ruleAlt = ruleAlt;
        this.root = root;
        this.ascii = ascii;
        this.ranges = ranges;
        this.ruleNames = ruleNames;
        this.source = source;
    }

    /**
     * Parses a GBNF grammar as llama.cpp's server takes it: {@code name ::= alternatives}, {@code |}, sequences,
     * groups, {@code * + ? {m} {m,} {m,n}}, string literals, character classes ({@code [a-z]}, {@code [^"\\]}),
     * {@code .}, escapes ({@code \n \t \r \\ \" \xHH \\uHHHH \UHHHHHHHH}) and {@code #} comments. The start rule is
     * {@code root}.
     *
     * @throws GrammarException naming the problem and where it is
     */
    public static Grammar parseGbnf(String gbnf) {
        return GbnfParser.parse(gbnf, "root");
    }

    /** {@link #parseGbnf(String)} with another start rule (used when grammars are composed). */
    public static Grammar parseGbnf(String gbnf, String rootRule) {
        return GbnfParser.parse(gbnf, rootRule);
    }

    /**
     * Compiles a JSON schema (the text of one JSON object) to a grammar whose sentences are JSON documents valid
     * against it; see {@link JsonSchemaGrammar} for what is supported.
     *
     * @throws GrammarException naming the schema feature that is not supported, or what is malformed
     */
    public static Grammar fromJsonSchema(String schemaJson) {
        return parseGbnf(JsonSchemaGrammar.toGbnf(schemaJson, "root"));
    }

    /** {@link #fromJsonSchema(String)} of an already parsed schema. */
    public static Grammar fromJsonSchema(com.fasterxml.jackson.databind.JsonNode schema) {
        return parseGbnf(JsonSchemaGrammar.toGbnf(schema, "root"));
    }

    /** Any JSON object ({@code response_format: json_object}). */
    public static Grammar anyJsonObject() {
        return AnyJson.OBJECT;
    }

    private static final class AnyJson {
        static final Grammar OBJECT = parseGbnf(JsonSchemaGrammar.anyObjectGbnf("root"));
    }

    /** The grammar's source text (GBNF; a JSON schema's compiled form). */
    public String gbnf() {
        return source;
    }

    public int ruleCount() {
        return ruleAlt.length - 1;
    }

    /** A fresh matcher at the start of the grammar. */
    public GrammarMatcher newMatcher() {
        return new GrammarMatcher(this);
    }

    /** True if {@code text} is a complete sentence of the grammar. */
    public boolean accepts(String text) {
        GrammarMatcher m = newMatcher();
        return m.advance(text.getBytes(StandardCharsets.UTF_8)) && m.isAccepting();
    }

    /** True if {@code text} can be continued into a sentence of the grammar (the empty string always can be, unless the grammar is empty). */
    public boolean acceptsPrefix(String text) {
        return newMatcher().advance(text.getBytes(StandardCharsets.UTF_8));
    }

    boolean classMatches(int cls, int cp) {
        if (cp < 128) {
            return (ascii[2 * cls + (cp >>> 6)] >>> (cp & 63) & 1L) != 0;
        }
        int[] r = ranges[cls];
        for (int i = 0; i < r.length; i += 2) {
            if (cp < r[i]) {
                return false;
            }
            if (cp <= r[i + 1]) {
                return true;
            }
        }
        return false;
    }

    /** True if the class holds any code point in [lo, hi] (lo >= 128: the completions of a partial UTF-8 sequence). */
    boolean classIntersects(int cls, int lo, int hi) {
        int[] r = ranges[cls];
        for (int i = 0; i < r.length; i += 2) {
            if (r[i] <= hi && r[i + 1] >= lo) {
                return true;
            }
        }
        return false;
    }

    /** True if the class holds every code point of [lo, hi] (lo >= 128). */
    boolean classContainsAll(int cls, int lo, int hi) {
        int[] r = ranges[cls];
        int need = lo;
        for (int i = 0; i < r.length && need <= hi; i += 2) {
            if (r[i] > need) {
                return false;
            }
            if (r[i + 1] >= need) {
                need = r[i + 1] + 1;
            }
        }
        return need > hi;
    }

    @Override
    public String toString() {
        return "Grammar[" + ruleCount() + " rules, " + code.length + " elements]";
    }
}
