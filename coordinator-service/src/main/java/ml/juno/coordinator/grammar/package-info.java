/**
 * Constrained decoding: GBNF grammars (llama.cpp's {@code grammar} syntax) and JSON schemas compiled to them
 * ({@link ml.juno.coordinator.grammar.Grammar}), a matcher that tracks every parse state the text so far allows
 * ({@link ml.juno.coordinator.grammar.GrammarMatcher}, over UTF-8 bytes), and the per-step token mask computed by
 * walking a trie of the vocabulary's byte strings ({@link ml.juno.coordinator.grammar.TokenTrie}). Plain Java; the
 * schema compiler reads JSON with Jackson. The mask walk allocates nothing once its buffers have grown.
 */
package ml.juno.coordinator.grammar;
