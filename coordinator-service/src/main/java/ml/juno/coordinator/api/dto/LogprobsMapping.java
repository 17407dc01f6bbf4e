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
        for (TokenLogprobs t : tokens) {
            String piece = tok.piece(t.tokenId());
            texts.add(piece);
            lps.add(t.logprob());
            Map<String, Float> top = new LinkedHashMap<>();
            int[] ids = t.topIds();
            for (int i = 0; i < ids.length; i++) {
                top.putIfAbsent(tok.piece(ids[i]), t.topLogprobs()[i]);
            }
            tops.add(top);
            offsets.add(offset);
            offset += piece.length();
        }
        return new TextCompletion.Logprobs(texts, lps, tops, offsets);
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
