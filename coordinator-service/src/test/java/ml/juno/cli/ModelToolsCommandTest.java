package ml.juno.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufTensorInfo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** gguf-info, quantize and synth through the command line, on real files. */
class ModelToolsCommandTest {

    static final Path MODELS = Path.of(System.getProperty("juno.models.dir", "../models"));

    @Test
    void ggufInfo_printsMetadataAndTensorTable() {
        JunoCliTest.Run r = JunoCliTest.run("gguf-info", MODELS.resolve("stories260K.gguf").toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("llama.block_count"), r.out());
        assertTrue(r.out().contains("blk.4.ffn_down.weight"), r.out());
    }

    @Test
    void ggufInfoJson_listsEveryTensorWithTypeAndShape() throws Exception {
        JunoCliTest.Run r = JunoCliTest.run("gguf-info", "--json", MODELS.resolve("testdata/stories260K-Q8_0.gguf").toString());
        assertEquals(0, r.code(), r.err());
        JsonNode json = new ObjectMapper().readTree(r.out());
        try (GgufFile f = GgufFile.open(MODELS.resolve("testdata/stories260K-Q8_0.gguf"))) {
            assertEquals(f.tensors().size(), json.get("tensors").size());
        }
        assertTrue(r.out().contains("\"Q8_0\""), r.out());
    }

    @Test
    void quantize_reproducesLlamaQuantizeBytes(@TempDir Path tmp) throws Exception {
        Path out = tmp.resolve("q8.gguf");
        JunoCliTest.Run r = JunoCliTest.run("quantize", "--pure", "--tensor-type", "ffn_down=f16",
                MODELS.resolve("stories260K.gguf").toString(), out.toString(), "Q8_0");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().startsWith("wrote "), r.out());
        try (GgufFile mine = GgufFile.open(out); GgufFile ref = GgufFile.open(MODELS.resolve("testdata/stories260K-Q8_0.gguf"))) {
            assertEquals(ref.tensors().size(), mine.tensors().size());
            for (GgufTensorInfo t : ref.tensors()) {
                GgufTensorInfo m = mine.tensor(t.name());
                assertEquals(t.type(), m.type(), t.name());
                assertEquals(-1L, ref.data(t).mismatch(mine.data(m)), t.name() + " bytes differ");
            }
        }
    }

    @Test
    void quantize_unknownType_isAOneLineError(@TempDir Path tmp) {
        JunoCliTest.Run r = JunoCliTest.run("quantize", MODELS.resolve("stories260K.gguf").toString(), tmp.resolve("x.gguf").toString(), "Q9_9");
        assertEquals(1, r.code());
        assertTrue(r.err().startsWith("juno: ") && r.err().contains("Q9_9"), r.err());
    }

    @Test
    void synth_unknownPreset_namesTheKnownOnes(@TempDir Path tmp) {
        JunoCliTest.Run r = JunoCliTest.run("synth", "--preset", "gpt-5", "-o", tmp.resolve("x.gguf").toString());
        assertEquals(1, r.code());
        assertTrue(r.err().contains("tinyllama-1.1b"), r.err());
    }

    @Test
    void synth_help_namesEveryPreset() {
        JunoCliTest.Run r = JunoCliTest.run("synth", "--help");
        assertEquals(0, r.code());
        String flat = r.out().replaceAll("\\s+", " ");
        for (ml.juno.engine.synth.SynthPreset p : ml.juno.engine.synth.SynthPreset.PRESETS) {
            assertTrue(flat.contains(p.name()), "synth --help should name preset " + p.name() + ":\n" + r.out());
        }
    }
}
