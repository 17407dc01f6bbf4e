package ml.juno.coordinator.tokenizer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** Prompt token ids recorded from llama.cpp for every shipped model. */
class ReferencePromptTokensTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static int[] ints(JsonNode array) {
        int[] r = new int[array.size()];
        for (int i = 0; i < r.length; i++) {
            r[i] = array.get(i).asInt();
        }
        return r;
    }

    @Test
    void promptTokens_matchLlamaCppForEveryReferenceFile() throws IOException {
        List<Path> files;
        try (Stream<Path> s = Files.list(TestModels.dir().resolve("testdata/reference"))) {
            files = s.filter(p -> p.getFileName().toString().contains("__p")
                    && !p.getFileName().toString().startsWith("tokenization")).sorted().toList();
        }
        assertTrue(files.size() >= 50, "expected the reference set, found " + files.size());
        List<String> checked = new ArrayList<>();
        for (Path f : files) {
            JsonNode ref = JSON.readTree(f.toFile());
            Tokenizer tok = TestModels.tokenizer(ref.get("model_file").asText());
            String prompt = ref.get("prompt").asText();
            int[] expected = ints(ref.get("prompt_tokens"));
            assertArrayEquals(expected, tok.encode(prompt, true, false), f.getFileName().toString());
            assertArrayEquals(ints(ref.get("llama_tokenize_cli_ids")), tok.encode(prompt, true, true),
                    f.getFileName() + " (llama-tokenize defaults)");
            assertEquals(prompt, tok.decode(expected), f.getFileName() + " round trip");
            checked.add(f.getFileName().toString());
        }
        assertEquals(files.size(), checked.size());
    }

    @Test
    void tokenizationReference_matchesWithAndWithoutBosForEveryModel() throws IOException {
        JsonNode root = JSON.readTree(TestModels.dir().resolve("testdata/reference/tokenization__p1_p2.json").toFile());
        int models = 0;
        for (Iterator<Map.Entry<String, JsonNode>> it = root.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            Tokenizer tok = TestModels.tokenizer(e.getValue().get("model_file").asText());
            for (JsonNode p : e.getValue().get("prompts")) {
                String prompt = p.get("prompt").asText();
                // llama-tokenize: parse_special = true by default
                assertArrayEquals(ints(p.get("ids_with_bos_if_model_adds_it")), tok.encode(prompt, true, true),
                        e.getKey() + " " + prompt);
                assertArrayEquals(ints(p.get("ids_no_bos")), tok.encode(prompt, false, true), e.getKey() + " " + prompt);
            }
            models++;
        }
        assertEquals(6, models);
    }
}
