package ml.juno.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import ml.juno.coordinator.tokenizer.Tokenizer;

/**
 * Training data for {@code juno lora train}: a plain text file (tokenized whole, cut into chunks of {@code seqLen}),
 * or a {@code .jsonl} file of {@code {"text": …}} objects (each line tokenized and chunked on its own). A line that
 * does not parse, or has no text, is named ({@code file:line}) before anything is trained.
 */
final class TrainingData {

    private TrainingData() {}

    static List<int[]> chunks(Path file, Tokenizer tokenizer, int seqLen) throws IOException {
        List<int[]> out = new ArrayList<>();
        if (file.getFileName().toString().endsWith(".jsonl")) {
            ObjectMapper mapper = new ObjectMapper();
            List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
            for (int i = 0; i < lines.size(); i++) {
                String line = lines.get(i);
                if (line.isBlank()) {
                    continue;
                }
                JsonNode n;
                try {
                    n = mapper.readTree(line);
                } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                    throw new CliException(file + ":" + (i + 1) + ": not a JSON object: " + e.getOriginalMessage());
                }
                if (n.has("messages")) {
                    throw new CliException(file + ":" + (i + 1) + ": {\"messages\": ...} lines are not implemented yet; use {\"text\": ...}");
                }
                if (!n.isObject() || !n.path("text").isTextual() || n.get("text").asText().isEmpty()) {
                    throw new CliException(file + ":" + (i + 1) + ": a line needs a non-empty \"text\" string");
                }
                cut(tokenizer.encode(n.get("text").asText()), seqLen, out);
            }
        } else {
            cut(tokenizer.encode(Files.readString(file, StandardCharsets.UTF_8)), seqLen, out);
        }
        if (out.isEmpty()) {
            throw new CliException(file + ": no training text (a chunk needs at least 2 tokens)");
        }
        return out;
    }

    private static void cut(int[] tokens, int seqLen, List<int[]> out) {
        for (int from = 0; from < tokens.length; from += seqLen) {
            int to = Math.min(tokens.length, from + seqLen);
            if (to - from >= 2) {
                out.add(Arrays.copyOfRange(tokens, from, to));
            }
        }
    }
}
