package ml.juno.coordinator.api.dto;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import ml.juno.coordinator.sampling.TokenLogprobs;
import ml.juno.coordinator.tokenizer.Tokenizer;

/** Engine log-probabilities in OpenAI's two shapes: chat entries and the legacy parallel lists. */
final class LogprobsMapping {

    private LogprobsMapping() {
    }

    static ChatLogprobs chat(List<TokenLogprobs> tokens, Tokenizer tok) {
        List<ChatLogprobs.Entry> entries = new ArrayList<>(tokens.size());
        for (TokenLogprobs t : tokens) {
            entries.add(entry(t, tok));
        }
        return new ChatLogprobs(entries);
    }

    static ChatLogprobs.Entry entry(TokenLogprobs t, Tokenizer tok) {
        int[] ids = t.topIds();
        float[] lps = t.topLogprobs();
        List<ChatLogprobs.Top> top = new ArrayList<>(ids.length);
        for (int i = 0; i < ids.length; i++) {
            top.add(new ChatLogprobs.Top(tok.piece(ids[i]), lps[i], bytes(tok, ids[i])));
        }
        return new ChatLogprobs.Entry(tok.piece(t.tokenId()), t.logprob(), bytes(tok, t.tokenId()), top);
    }

    /**
     * The legacy shape for the tokens of one choice.
     *
     * @param offset character offset of the first token in the choice's text
     */
    static TextCompletion.Logprobs text(List<TokenLogprobs> tokens, Tokenizer tok, int offset) {
        List<String> texts = new ArrayList<>(tokens.size());
        List<Float> lps = new ArrayList<>(tokens.size());
        List<Map<String, Float>> tops = new ArrayList<>(tokens.size());
        List<Integer> offsets = new ArrayList<>(tokens.size());
        append(tokens, tok, offset, texts, lps, tops, offsets);
        return new TextCompletion.Logprobs(texts, lps, tops, offsets);
    }

    /**
     * {@code echo} with logprobs: the prompt's tokens ({@link #echoed}) from offset 0, then the generated ones from
     * {@code generatedOffset} (the length of the echoed text).
     */
    static TextCompletion.Logprobs echoed(List<TokenLogprobs> prompt, List<TokenLogprobs> generated, Tokenizer tok,
                                          String echoText) {
        List<TokenLogprobs> shown = echoed(prompt, tok);
        int n = shown.size() + generated.size();
        List<String> texts = new ArrayList<>(n);
        List<Float> lps = new ArrayList<>(n);
        List<Map<String, Float>> tops = new ArrayList<>(n);
        List<Integer> offsets = new ArrayList<>(n);
        append(shown, tok, firstOffset(shown, tok, echoText), texts, lps, tops, offsets);
        append(generated, tok, echoText.length(), texts, lps, tops, offsets);
        return new TextCompletion.Logprobs(texts, lps, tops, offsets);
    }

    /** The echoed prompt's own entries (a streamed echo chunk). */
    static TextCompletion.Logprobs echo(List<TokenLogprobs> prompt, Tokenizer tok, String echoText) {
        List<TokenLogprobs> shown = echoed(prompt, tok);
        return text(shown, tok, firstOffset(shown, tok, echoText));
    }

    /**
     * -1 when the first piece starts with the space a SentencePiece vocabulary puts in front of the text, which the text
     * itself does not have: the offsets then point at the words, offset 0 stays 0.
     */
    private static int firstOffset(List<TokenLogprobs> shown, Tokenizer tok, String echoText) {
        return !shown.isEmpty() && tok.piece(shown.getFirst().tokenId()).startsWith(" ") && !echoText.startsWith(" ") ? -1 : 0;
    }

    /**
     * The prompt tokens an echo lists: all but a leading BOS the tokenizer added (it is no text of the prompt; the token
     * after it keeps its log-probability given the BOS). A first token with nothing before it has a null log-probability
     * and null top_logprobs, as OpenAI's.
     */
    private static List<TokenLogprobs> echoed(List<TokenLogprobs> prompt, Tokenizer tok) {
        if (!prompt.isEmpty() && prompt.getFirst().tokenId() == tok.bos() && tok.bos() >= 0) {
            return prompt.subList(1, prompt.size());
        }
        return prompt;
    }

    private static void append(List<TokenLogprobs> tokens, Tokenizer tok, int offset, List<String> texts, List<Float> lps,
                               List<Map<String, Float>> tops, List<Integer> offsets) {
        for (TokenLogprobs t : tokens) {
            String piece = tok.piece(t.tokenId());
            texts.add(piece);
            boolean none = Float.isNaN(t.logprob()); // the first prompt token: nothing to condition on
            lps.add(none ? null : t.logprob());
            Map<String, Float> top = none ? null : new LinkedHashMap<>();
            int[] ids = t.topIds();
            for (int i = 0; top != null && i < ids.length; i++) {
                top.putIfAbsent(tok.piece(ids[i]), t.topLogprobs()[i]);
            }
            tops.add(top);
            offsets.add(Math.max(0, offset));
            offset += piece.length();
        }
    }

    private static int[] bytes(Tokenizer tok, int id) {
        byte[] b = tok.pieceBytes(id, true);
        int[] out = new int[b.length];
        for (int i = 0; i < b.length; i++) {
            out[i] = b[i] & 0xFF;
        }
        return out;
    }
}
