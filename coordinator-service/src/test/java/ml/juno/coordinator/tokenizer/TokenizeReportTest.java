package ml.juno.coordinator.tokenizer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The {@code juno tokenize} entry point, with llama-tokenize's defaults and output. */
class TokenizeReportTest {

    @Test
    void defaults_addBosAndParseSpecialText() throws IOException {
        TokenizeReport r = TokenizeReport.run(TestModels.find("stories260K.gguf"), "Once upon a time</s>", false, false);
        assertArrayEquals(new int[] {1, 403, 407, 261, 378, 2}, r.ids());
        assertEquals(List.of("<s>", " Once", " upon", " a", " time", "</s>"), r.pieces());
        assertEquals("     1 -> '<s>'\n   403 -> ' Once'\n   407 -> ' upon'\n   261 -> ' a'\n   378 -> ' time'\n"
                + "     2 -> '</s>'\n", r.toText().replace(System.lineSeparator(), "\n"));
    }

    @Test
    void flags_dropBosAndSpellSpecialText() throws IOException {
        Path model = TestModels.find("stories260K.gguf");
        TokenizeReport r = TokenizeReport.run(model, "Once upon a time</s>", true, true);
        assertEquals(403, r.ids()[0]);
        assertEquals(-1, java.util.Arrays.stream(r.ids()).filter(i -> i == 2 || i == 1).findAny().orElse(-1));
    }

    @Test
    void json_listsIdsAndEscapedPieces() {
        Tokenizer tok = TestModels.tokenizer("ggml-vocab-gpt-2.gguf");
        TokenizeReport r = TokenizeReport.of(tok, "Hi \"x\"\n", true, false);
        assertEquals("{\"ids\":[17250,366,87,1,198],\"tokens\":[{\"id\":17250,\"piece\":\"Hi\"},{\"id\":366,\"piece\":\" \\\"\"},"
                + "{\"id\":87,\"piece\":\"x\"},{\"id\":1,\"piece\":\"\\\"\"},{\"id\":198,\"piece\":\"\\n\"}]}", r.toJson());
    }

    @Test
    void missingFile_failsWithIoException() {
        assertThrows(IOException.class, () -> TokenizeReport.run(Path.of("/nonexistent/model.gguf"), "x", false, false));
    }
}
