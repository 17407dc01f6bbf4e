package ml.juno.coordinator.tokenizer;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import ml.juno.engine.gguf.GgufFile;

/**
 * What {@code juno tokenize} prints: the ids of a text and the piece each stands for. Same defaults as
 * llama.cpp's {@code llama-tokenize}: BOS added when the model asks for it (unless {@code --no-bos}),
 * special-token text parsed (unless {@code --no-parse-special}).
 *
 * @param ids    token ids
 * @param pieces the text of each token, special tokens rendered (may hold part of a UTF-8 character)
 */
public record TokenizeReport(int[] ids, List<String> pieces) {
    public TokenizeReport {
        ids = ids.clone();
        pieces = List.copyOf(pieces);
    }

    /** Tokenizes {@code text} with the vocabulary of the model file at {@code modelPath}. */
    public static TokenizeReport run(Path modelPath, String text, boolean noBos, boolean noParseSpecial)
            throws IOException {
        try (GgufFile f = GgufFile.open(modelPath)) {
            return of(Tokenizer.fromGguf(f), text, noBos, noParseSpecial);
        }
    }

    public static TokenizeReport of(Tokenizer tok, String text, boolean noBos, boolean noParseSpecial) {
        int[] ids = tok.encode(text, !noBos, !noParseSpecial);
        List<String> pieces = new ArrayList<>(ids.length);
        for (int id : ids) {
            pieces.add(tok.piece(id));
        }
        return new TokenizeReport(ids, pieces);
    }

    /** llama-tokenize's default output: one {@code "%6d -> '%s'"} line per token. */
    public String toText() {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < ids.length; i++) {
            sb.append(String.format("%6d -> '%s'%n", ids[i], pieces.get(i)));
        }
        return sb.toString();
    }

    /** {@code {"ids":[…],"tokens":[{"id":…,"piece":"…"},…]}}. */
    public String toJson() {
        StringBuilder sb = new StringBuilder("{\"ids\":[");
        for (int i = 0; i < ids.length; i++) {
            sb.append(i == 0 ? "" : ",").append(ids[i]);
        }
        sb.append("],\"tokens\":[");
        for (int i = 0; i < ids.length; i++) {
            sb.append(i == 0 ? "" : ",").append("{\"id\":").append(ids[i]).append(",\"piece\":");
            quote(sb, pieces.get(i));
            sb.append('}');
        }
        return sb.append("]}").toString();
    }

    private static void quote(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append('"');
    }
}
