package ml.juno.coordinator.grammar;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import ml.juno.coordinator.sampling.LogitBias;
import ml.juno.coordinator.sampling.RepetitionPenalties;
import ml.juno.coordinator.sampling.Sampler;
import ml.juno.coordinator.sampling.SamplerState;
import ml.juno.coordinator.sampling.SamplingParams;
import ml.juno.coordinator.sampling.TokenLogprobs;
import ml.juno.coordinator.sampling.Truncation;
import ml.juno.coordinator.tokenizer.Tokenizer;
import ml.juno.engine.gguf.GgufFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The token mask on real vocabularies (models/testdata/vocab) against a token-by-token check, and the sampler hook. */
class TokenMaskTest {
    private static final Map<String, Tokenizer> TOKENIZERS = new ConcurrentHashMap<>();
    private static final ObjectMapper JSON = new ObjectMapper();

    static Tokenizer tokenizer(String name) {
        return TOKENIZERS.computeIfAbsent(name, n -> {
            Path p = Path.of(System.getProperty("juno.models.dir"), "testdata", "vocab", n);
            try (GgufFile g = GgufFile.open(p)) {
                return Tokenizer.fromGguf(g);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
    }

    static GrammarConstraint constraint(Tokenizer t, Grammar g) {
        TokenTrie trie = TokenTrie.cached(t, t.size(), id -> t.pieceBytes(id, false));
        return new GrammarConstraint(g, trie, t.endOfGenerationIds());
    }

    static final String SCHEMA = """
            {"type":"object","additionalProperties":false,"required":["name","n","ok"],
             "properties":{"name":{"type":"string","maxLength":12},"n":{"type":"integer"},"ok":{"type":"boolean"},
                           "tags":{"type":"array","items":{"enum":["x","yz"]}}}}
            """;
    /** With an unbounded string too (where the walk takes whole subtrees at once). */
    static final String SCHEMA_WITH_NOTE = SCHEMA.replace("]}}}}", "]}},\"note\":{\"type\":\"string\"}}}");

    @ParameterizedTest
    @ValueSource(strings = {"ggml-vocab-llama-spm.gguf", "ggml-vocab-gpt-2.gguf"})
    void mask_equalsFeedingEveryTokenOnItsOwn(String vocab) {
        Tokenizer t = tokenizer(vocab);
        Grammar g = Grammar.fromJsonSchema(SCHEMA_WITH_NOTE);
        assertTrue(g.acceptsPrefix("{\"name\":\"\",\"n\":3,\"ok\":false,\"note\":\""), g.gbnf());
        assertMaskIsExact(t, g, vocab, "", "{\"na", "{\"name\":\"h\u00e9", "{\"name\":\"abc\",\"n\":1",
                "{\"name\":\"\",\"n\":3,\"ok\":false,\"tags\":[\"x\",",
                // inside an unbounded string: the walk takes whole subtrees at once there
                "{\"name\":\"\",\"n\":3,\"ok\":false,\"note\":\"ab", "{\"name\":\"\",\"n\":3,\"ok\":false,\"note\":\"\u00e9 \\n",
                // inside the string of at most 12 characters, at every count left: the chain of sets takes subtrees there
                "{\"name\":\"", "{\"name\":\"a", "{\"name\":\"abcd", "{\"name\":\"abcdefg", "{\"name\":\"abcdefghij",
                "{\"name\":\"abcdefghijk", "{\"name\":\"abcdefghijkl", "{\"name\":\"\u00e9\u00e9 \\\"ab");
    }

    /** Grammars whose sets move on with every character: bounded repetitions, alternating classes, a long bound. */
    @ParameterizedTest
    @ValueSource(strings = {"ggml-vocab-llama-spm.gguf", "ggml-vocab-gpt-2.gguf"})
    void mask_equalsFeedingEveryTokenOnItsOwn_whereEveryCharacterMovesTheSet(String vocab) {
        Tokenizer t = tokenizer(vocab);
        assertMaskIsExact(t, Grammar.parseGbnf("root ::= [a-z ]{0,20} \".\""), vocab, "", "ab", "abcdefghijklmnop", "abcdefghijklmnopqrs");
        assertMaskIsExact(t, Grammar.parseGbnf("root ::= ([a-z] [A-Z])* \"!\""), vocab, "", "a", "aB", "aBcDe");
        assertMaskIsExact(t, Grammar.parseGbnf("root ::= [^\"\\\\]{3,60} \"\\\"\" | \"x\" [a-m]{0,5}"), vocab, "", "x", "xab", "hello world, ");
    }

    /** The mask after each prefix equals feeding every token on its own, and leaves the matcher as it was. */
    private static void assertMaskIsExact(Tokenizer t, Grammar g, String vocab, String... prefixes) {
        GrammarConstraint c = constraint(t, g);
        long[] mask = new long[(t.size() + 63) / 64];
        for (String prefix : prefixes) {
            GrammarMatcher m = g.newMatcher();
            assertTrue(m.advance(prefix.getBytes(StandardCharsets.UTF_8)), prefix);
            c.fillMask(m, mask);
            int allowed = 0;
            for (int id = 0; id < t.size(); id++) {
                byte[] piece = t.pieceBytes(id, false);
                boolean expected;
                if (piece.length == 0) {
                    expected = isEnd(t, id) && m.isAccepting();
                } else {
                    GrammarMatcher fresh = g.newMatcher();
                    fresh.advance(prefix.getBytes(StandardCharsets.UTF_8));
                    expected = fresh.advance(piece);
                }
                boolean got = (mask[id >>> 6] >>> (id & 63) & 1) != 0;
                assertEquals(expected, got, vocab + ": token " + id + " '" + t.piece(id) + "' after '" + prefix + "' in " + g.gbnf());
                allowed += got ? 1 : 0;
            }
            assertTrue(allowed > 0, "some token continues '" + prefix + "'");
            // the walk undid everything it made: the matcher still continues as before
            GrammarMatcher again = g.newMatcher();
            again.advance(prefix.getBytes(StandardCharsets.UTF_8));
            long[] twice = new long[mask.length];
            c.fillMask(m, twice);
            assertArrayEquals(mask, twice, "a second mask from the same state");
            assertEquals(again.stackCount(), m.stackCount(), "the state is as it was after '" + prefix + "'");
        }
    }

    private static boolean isEnd(Tokenizer t, int id) {
        for (int e : t.endOfGenerationIds()) {
            if (e == id) {
                return true;
            }
        }
        return false;
    }

    @Test
    void endOfGeneration_allowedOnlyWhenTheGrammarAccepts() {
        Tokenizer t = tokenizer("ggml-vocab-llama-spm.gguf");
        GrammarConstraint c = constraint(t, Grammar.parseGbnf("root ::= [0-9]+"));
        long[] mask = new long[(t.size() + 63) / 64];
        GrammarMatcher m = c.newMatcher();
        c.fillMask(m, mask);
        int eos = t.eos();
        assertFalse((mask[eos >>> 6] >>> (eos & 63) & 1) != 0, "no digits yet");
        assertTrue(m.advance("4".getBytes(StandardCharsets.UTF_8)));
        c.fillMask(m, mask);
        assertTrue((mask[eos >>> 6] >>> (eos & 63) & 1) != 0, "a number is complete");
    }

    @Test
    void trie_isSharedPerVocabulary() {
        Tokenizer t = tokenizer("ggml-vocab-llama-spm.gguf");
        TokenTrie a = TokenTrie.cached(t, t.size(), id -> t.pieceBytes(id, false));
        TokenTrie b = TokenTrie.cached(t, t.size(), id -> {
            throw new AssertionError("built twice");
        });
        assertTrue(a == b);
        assertTrue(a.nodeCount() > 1000 && a.nodeCount() < 200_000, "nodes: " + a.nodeCount());
    }

    /** Random logits, the real sampler: whatever the "model" prefers, the text is valid and decoding ends by itself. */
    @ParameterizedTest
    @ValueSource(strings = {"ggml-vocab-llama-spm.gguf", "ggml-vocab-gpt-2.gguf"})
    void sampler_drawsOnlyAllowedTokensAndStopsWhenTheSchemaIsComplete(String vocab) throws Exception {
        Tokenizer t = tokenizer(vocab);
        Grammar g = Grammar.fromJsonSchema(SCHEMA);
        GrammarConstraint c = constraint(t, g);
        Sampler sampler = new Sampler(t.size());
        float[] logits = new float[t.size()];
        for (int seed = 1; seed <= 3; seed++) {
            SplittableRandom rnd = new SplittableRandom(seed);
            SamplingParams p = new SamplingParams(seed % 2 == 0 ? 0f : 1.5f, new Truncation(40, 0.95f, 0f),
                    RepetitionPenalties.NONE, LogitBias.NONE, seed).withGrammar(c);
            SamplerState state = new SamplerState(p, t.size(), 3);
            ByteArrayOutputStream text = new ByteArrayOutputStream();
            boolean done = false;
            for (int step = 0; step < 400 && !done; step++) {
                for (int i = 0; i < logits.length; i++) {
                    logits[i] = (float) (rnd.nextGaussian() * 3);
                }
                int token = sampler.sample(logits, 0, state);
                TokenLogprobs lp = sampler.logprobs(logits, 0, token, 3, state);
                assertTrue(lp.logprob() > Float.NEGATIVE_INFINITY && lp.logprob() <= 0, "the chosen token was allowed");
                if (isEnd(t, token)) {
                    done = true;
                    break;
                }
                assertTrue(state.advanceGrammar(token), "token " + token + " was allowed by the mask");
                text.write(t.pieceBytes(token, false));
                done = state.grammarComplete();
            }
            String out = text.toString(StandardCharsets.UTF_8);
            assertTrue(done, "decoding ended by itself: " + out);
            JsonNode doc = JSON.readTree(out);
            assertTrue(doc.get("name").isTextual() && doc.get("name").textValue().length() <= 12, out);
            assertTrue(doc.get("n").isIntegralNumber() && doc.get("ok").isBoolean(), out);
            assertTrue(g.accepts(out), out);
        }
    }

    @Test
    void constrainedLogprobs_areTheDistributionOverAllowedTokens() {
        Tokenizer t = tokenizer("ggml-vocab-llama-spm.gguf");
        GrammarConstraint c = constraint(t, Grammar.parseGbnf("root ::= \"yes\" | \"no\""));
        Sampler sampler = new Sampler(t.size());
        SamplerState state = new SamplerState(SamplingParams.greedy().withGrammar(c), t.size(), 5);
        float[] logits = new float[t.size()];
        SplittableRandom rnd = new SplittableRandom(7);
        for (int i = 0; i < logits.length; i++) {
            logits[i] = (float) rnd.nextGaussian();
        }
        int token = sampler.sample(logits, 0, state);
        TokenLogprobs lp = sampler.logprobs(logits, 0, token, 5, state);
        double sum = 0;
        for (int i = 0; i < lp.topIds().length; i++) {
            String piece = t.piece(lp.topIds()[i]);
            assertTrue("yes".startsWith(piece) || "no".startsWith(piece), "alternative '" + piece + "' is allowed");
            sum += Math.exp(lp.topLogprobs()[i]);
        }
        assertTrue(lp.topIds().length >= 2, "at least y.. and n.. are allowed");
        assertTrue(sum <= 1.0001 && sum > 0.5, "few allowed tokens carry the whole mass: " + sum);
        assertEquals(lp.topIds()[0], token, "greedy takes the best allowed token");
    }

    /** Not an assertion on speed: prints the mask cost per token (the figure docs/performance.md quotes). */
    @Test
    void maskCost_isPrinted() {
        for (String vocab : new String[] {"ggml-vocab-llama-spm.gguf", "ggml-vocab-gpt-2.gguf"}) {
            Tokenizer t = tokenizer(vocab);
            Grammar g = Grammar.fromJsonSchema(SCHEMA);
            GrammarConstraint c = constraint(t, g);
            long[] mask = new long[(t.size() + 63) / 64];
            String[] states = {"{", "{\"name\":\"ab", "{\"name\":\"ab\",\"n\":12"};
            GrammarMatcher[] ms = new GrammarMatcher[states.length];
            for (int i = 0; i < states.length; i++) {
                ms[i] = g.newMatcher();
                ms[i].advance(states[i].getBytes(StandardCharsets.UTF_8));
            }
            for (int warm = 0; warm < 10; warm++) {
                for (GrammarMatcher m : ms) {
                    c.fillMask(m, mask);
                }
            }
            StringBuilder line = new StringBuilder("mask cost, " + vocab + " (" + t.size() + " tokens):");
            for (int i = 0; i < states.length; i++) {
                int reps = 20;
                long t0 = System.nanoTime();
                for (int r = 0; r < reps; r++) {
                    c.fillMask(ms[i], mask);
                }
                line.append(String.format(" after '%s' %.0f us;", states[i], (System.nanoTime() - t0) / 1e3 / reps));
            }
            System.out.println(line);
        }
        long[] a = new long[1];
        assertArrayEquals(new long[1], a);
    }
}
