package ml.juno.coordinator.grammar;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class GbnfGrammarTest {

    static final String JSON = """
            # a JSON grammar of our own, in the layout llama.cpp's grammars use
            root   ::= ws value ws
            value  ::= object | array | string | number | ("true" | "false" | "null")
            object ::=
              "{" ws (
                string ws ":" ws value ws
                ("," ws string ws ":" ws value ws)*
              )? "}"
            array  ::= "[" ws ( value ws ("," ws value ws)* )? "]"
            string ::= "\\"" ( [^"\\\\\\x00-\\x1f] | "\\\\" (["\\\\/bfnrt] | "u" [0-9a-fA-F]{4}) )* "\\""
            number ::= "-"? ("0" | [1-9] [0-9]*) ("." [0-9]+)? ([eE] [-+]? [0-9]+)?
            ws     ::= [ \\t\\n\\r]*
            """;

    static final String ARITHMETIC = """
            root   ::= expr
            expr   ::= term (("+" | "-") term)*
            term   ::= factor (("*" | "/") factor)*
            factor ::= number | "(" expr ")" | "-" factor
            number ::= [0-9]+
            """;

    static final String LIST = """
            root ::= "- " item ("\\n- " item){0,4} "\\n"?   # one to five items
            item ::= [a-z] [a-z0-9 ]{0,11}
            """;

    private static void assertLanguage(Grammar g, List<String> accept, List<String> reject) {
        for (String s : accept) {
            assertTrue(g.accepts(s), "should accept: " + s);
            for (int i = 0; i <= s.length(); i++) {
                assertTrue(g.acceptsPrefix(s.substring(0, i)), "every prefix of an accepted text is a valid prefix: '"
                        + s.substring(0, i) + "' of " + s);
            }
        }
        for (String s : reject) {
            assertFalse(g.accepts(s), "should reject: " + s);
        }
    }

    @Test
    void json_acceptsDocumentsAndRejectsNearMisses() {
        Grammar g = Grammar.parseGbnf(JSON);
        assertLanguage(g,
                List.of("{}", "[]", "0", "-0.5e+10", "\"\"", "\"a\\\"b\\u00e9\"", "true", "null",
                        "{\"a\": [1, 2, {\"b\": null}], \"c\": \"x\"}", " [ ] ", "\"grüße ☃ 😀\"",
                        "{\n  \"k\": -12.25E3\n}"),
                List.of("", "{", "[1,]", "{\"a\" 1}", "01", "1.", "-", "tru", "\"unterminated", "{'a': 1}",
                        "[1 2]", "\"tab\there\"", "\"\\x\"", "nul", "{\"a\":1,}"));
        assertFalse(g.acceptsPrefix("{\"a\":1,}"));
        assertTrue(g.acceptsPrefix("{\"a\":[1,{\"b\":"));
    }

    @Test
    void arithmetic_acceptsExpressionsAndRejectsBrokenOnes() {
        Grammar g = Grammar.parseGbnf(ARITHMETIC);
        assertLanguage(g, List.of("1", "1+2*3", "(1+2)*3", "-(4/2)", "((7))", "10-2-3", "2*-3"),
                List.of("", "+", "1+", "(1", "1)", "1++2", "()", "1 + 2", "a"));
        assertFalse(g.acceptsPrefix("1)"));
        assertTrue(g.acceptsPrefix("((1+"));
    }

    @Test
    void list_countsItemsWithBoundedRepetition() {
        Grammar g = Grammar.parseGbnf(LIST);
        assertLanguage(g, List.of("- a", "- apples\n- pears 2\n", "- a\n- b\n- c\n- d\n- e"),
                List.of("- ", "-a", "- A", "- a\n- b\n- c\n- d\n- e\n- f", "- abcdefghijklm", "- a\n\n"));
    }

    @Test
    void repetitionOperators_countExactly() {
        Grammar g = Grammar.parseGbnf("root ::= \"a\"{2} \"b\"{1,} \"c\"{0,2} \"d\"? \"e\"+ \"f\"*");
        assertLanguage(g, List.of("aabe", "aabbbcceeff", "aabcdeee"), List.of("abe", "aab", "aabccce", "aabdde"));
        Grammar group = Grammar.parseGbnf("root ::= (\"ab\" | \"c\"){2,3}");
        assertLanguage(group, List.of("abab", "abcc", "ccc", "cab"), List.of("ab", "abababab", "a", "abca"));
    }

    @Test
    void charClasses_rangesNegationEscapesAndUnicode() {
        Grammar g = Grammar.parseGbnf("root ::= [a-cx-z] [^a-z\\n] [\\x41-\\x43] [é-ë] [\\u2600-\\u26FF] .");
        assertLanguage(g, List.of("aAAé☃x", "z\u00e9Cë⛄\n", "b😀Bê☀😀"),
                List.of("dAAé☃x", "aaAé☃x", "a\nAé☃x", "aADé☃x", "aAAè☃x", "aAAé✀x", "aAAé☃"));
    }

    @Test
    void literalEscapesAndComments() {
        Grammar g = Grammar.parseGbnf("""
                root ::= "\\"q\\"" "\\t" "\\\\" "\\x7e" "\\u00e9" "\\U0001F600" # the end
                # a comment line
                """);
        assertTrue(g.accepts("\"q\"\t\\~é😀"));
        assertFalse(g.accepts("\"q\" \\~é😀"));
    }

    @Test
    void multiByteCharacters_mayBeSplitAcrossFeeds() {
        Grammar g = Grammar.parseGbnf("root ::= \"é\" [☃-⛄]+");
        GrammarMatcher m = g.newMatcher();
        byte[] b = "é☃⛄".getBytes(StandardCharsets.UTF_8);
        for (byte x : b) {
            assertTrue(m.advance(new byte[] {x}), "byte by byte");
            assertFalse(m.isComplete());
        }
        assertTrue(m.isAccepting());
        GrammarMatcher bad = g.newMatcher();
        assertFalse(bad.advance(new byte[] {(byte) 0xC3, (byte) 0xA8}), "è is not é");
        assertFalse(bad.advance(new byte[] {(byte) 0xE2}), "a 3-byte lead cannot start é");
        assertTrue(bad.advance(new byte[] {(byte) 0xC3}), "the lead byte of é can");
        assertFalse(bad.isAccepting(), "half a character is not a sentence");
        assertFalse(bad.advance(new byte[] {(byte) 0xFF}), "never valid UTF-8");
    }

    @Test
    void failedAdvance_leavesTheStateUnchanged() {
        Grammar g = Grammar.parseGbnf("root ::= \"abc\" | \"abd\"");
        GrammarMatcher m = g.newMatcher();
        assertTrue(m.advance("ab".getBytes(StandardCharsets.UTF_8)));
        assertFalse(m.advance("cx".getBytes(StandardCharsets.UTF_8)));
        assertTrue(m.advance("d".getBytes(StandardCharsets.UTF_8)));
        assertTrue(m.isComplete(), "nothing may follow abd");
    }

    @Test
    void completeOnlyWhenNothingMayFollow() {
        GrammarMatcher m = Grammar.parseGbnf("root ::= [0-9]{1,3}").newMatcher();
        assertFalse(m.isAccepting());
        m.advance("12".getBytes(StandardCharsets.UTF_8));
        assertTrue(m.isAccepting());
        assertFalse(m.isComplete());
        m.advance("3".getBytes(StandardCharsets.UTF_8));
        assertTrue(m.isComplete());
    }

    @Test
    void longRepetitions_keepStacksFlat() {
        Grammar g = Grammar.parseGbnf(JSON);
        String big = "[" + "1,".repeat(20_000) + "1]";
        assertTrue(g.accepts(big));
        String str = "\"" + "x".repeat(50_000) + "\"";
        assertTrue(g.accepts(str));
    }

    @Test
    void ambiguousGrammar_staysSmall() {
        Grammar g = Grammar.parseGbnf("root ::= (\"a\" | \"a\" | [a-z])* \"!\"");
        assertTrue(g.accepts("a".repeat(5000) + "!"), "equal stacks are one stack, so the set does not double per character");
    }

    @Test
    void parseErrors_nameTheProblem() {
        assertMessage("root ::= foo", "rule 'foo' is used but never defined");
        assertMessage("item ::= \"a\"", "no 'root' rule");
        assertMessage("root ::= \"abc", "unterminated string");
        assertMessage("root ::= [abc", "unterminated character class");
        assertMessage("root ::= [z-a]", "backwards");
        assertMessage("root ::= \"\\q\"", "unknown escape");
        assertMessage("root ::= root \"a\" | \"b\"", "left-recursive");
        assertMessage("root ::= x* \"a\"\nx ::= \"\"?", "left-recursive");
        assertMessage("root ::= (\"a\" ", "missing ')'");
        assertMessage("root ::= \"a\" )", "unmatched ')'");
        assertMessage("root ::= \"a\"{3,1}", "maximum is below the minimum");
        assertMessage("root ::= \"a\"{1000000}", "repetition count");
        assertMessage("root ::= \"a\"\nroot ::= \"b\"", "defined twice");
        assertMessage("root ::= <[123]>", "token references");
        assertMessage("", "empty");
        assertMessage("root = \"a\"", "'::='");
    }

    @Test
    void errorPositions_pointAtTheLine() {
        GrammarException e = assertThrows(GrammarException.class, () -> Grammar.parseGbnf("root ::= a\na ::= \"x\n\""));
        assertTrue(e.getMessage().contains("line 2"), e.getMessage());
    }

    private static void assertMessage(String gbnf, String part) {
        GrammarException e = assertThrows(GrammarException.class, () -> Grammar.parseGbnf(gbnf), gbnf);
        assertTrue(e.getMessage().contains(part), "'" + e.getMessage() + "' should contain '" + part + "'");
    }

    @Test
    void gbnf_returnsTheSource() {
        assertEquals("root ::= \"a\"", Grammar.parseGbnf("root ::= \"a\"").gbnf());
    }
}
