package ml.juno.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.lora.BaseFingerprint;
import ml.juno.engine.lora.LoraAdapter;
import ml.juno.engine.lora.LoraFile;
import ml.juno.engine.lora.LoraPair;
import ml.juno.engine.model.block.Projection;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --lora-play} on generate, {@code juno lora export/import} and {@code juno merge}, through the real CLI. */
class LoraCommandsTest {
    static final Path MODELS = Path.of(System.getProperty("juno.models.dir", "../models"));
    static final String STORIES = MODELS.resolve("stories260K.gguf").toString();

    @TempDir
    Path dir;

    /** A random adapter on q, v and down of every layer of {@code model}. */
    static LoraAdapter adapter(String model, long seed, float magnitude) throws Exception {
        try (GgufFile f = GgufFile.open(Path.of(model))) {
            BaseFingerprint fp = BaseFingerprint.of(f);
            SplittableRandom rnd = new SplittableRandom(seed);
            List<LoraPair> pairs = new ArrayList<>();
            List<Projection> targets = List.of(Projection.Q, Projection.V, Projection.DOWN);
            for (int l = 0; l < fp.shapes().layers(); l++) {
                for (Projection t : targets) {
                    int[] d = LoraPair.dims(t, fp.shapes());
                    float[] a = new float[4 * d[0]];
                    float[] b = new float[d[1] * 4];
                    for (int i = 0; i < a.length; i++) {
                        a[i] = (float) rnd.nextDouble(-magnitude, magnitude);
                    }
                    for (int i = 0; i < b.length; i++) {
                        b[i] = (float) rnd.nextDouble(-magnitude, magnitude);
                    }
                    pairs.add(new LoraPair(l, t, 4, d[0], d[1], a, b));
                }
            }
            return new LoraAdapter(new LoraAdapter.Header(LoraAdapter.FORMAT_VERSION, fp, EnumSet.copyOf(targets), 4, 8f, false,
                    Map.of()), pairs);
        }
    }

    private static JsonNode tokens(String... extra) throws Exception {
        List<String> args = new ArrayList<>(List.of("generate", "--prompt", "Once upon a time", "-n", "24", "--temperature", "0",
                "--ignore-eos", "--threads", "1", "--json"));
        args.addAll(List.of(extra));
        if (!args.contains("-m")) {
            args.addAll(List.of("-m", STORIES));
        }
        JunoCliTest.Run r = JunoCliTest.run(args.toArray(String[]::new));
        assertEquals(0, r.code(), r.err());
        return new ObjectMapper().readTree(r.out()).get("tokens");
    }

    @Test
    void loraPlay_exportImport_andMerge_agreeOnTheGreedyTokens() throws Exception {
        Path lora = dir.resolve("a.lora");
        LoraAdapter a = adapter(STORIES, 5, 0.3f);
        LoraFile.write(lora, a);
        JsonNode none = tokens();
        JsonNode played = tokens("--lora-play", lora.toString());
        assertNotEquals(none, played, "the adapter changes the greedy continuation");
        assertEquals(none, tokens("--lora-play", lora + ":0"), "scale 0 plays nothing");

        Path gguf = dir.resolve("a.gguf");
        JunoCliTest.Run r = JunoCliTest.run("lora", "export", lora.toString(), gguf.toString());
        assertEquals(0, r.code(), r.err());
        assertEquals(played, tokens("--lora-play", gguf.toString()), "llama.cpp's format plays the same");
        Path back = dir.resolve("back.lora");
        r = JunoCliTest.run("lora", "import", gguf.toString(), back.toString(), "-m", STORIES);
        assertEquals(0, r.code(), r.err());
        LoraAdapter b = LoraFile.read(back);
        for (LoraPair p : a.pairs()) {
            assertArrayEquals(p.b(), b.pair(p.layer(), p.target()).b());
            assertArrayEquals(p.a(), b.pair(p.layer(), p.target()).a());
        }

        Path merged = dir.resolve("merged.gguf");
        r = JunoCliTest.run("merge", "-m", STORIES, "--lora", lora.toString(), "--output", merged.toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("tensors adapted (F32)"), r.out());
        assertEquals(played, tokens("-m", merged.toString()), "the merged F32 model generates what play does");
    }

    @Test
    void wrongBase_missingFile_andUnbuiltTraining_areClearErrors() throws Exception {
        Path lora = dir.resolve("other.lora");
        String other = MODELS.resolve("testdata/tiny-random/tiny-llama-random-F32.gguf").toString();
        LoraFile.write(lora, adapter(other, 1, 0.1f));
        JunoCliTest.Run r = JunoCliTest.run("generate", "-m", STORIES, "--prompt", "x", "-n", "2", "--lora-play", lora.toString());
        assertNotEquals(0, r.code());
        assertTrue(r.err().contains("was made for base") && r.err().contains("not for this model"), r.err());
        r = JunoCliTest.run("generate", "-m", STORIES, "--prompt", "x", "--lora-play", dir.resolve("nope.lora").toString());
        assertNotEquals(0, r.code());
        assertTrue(r.err().contains("adapter file not found"), r.err());
        r = JunoCliTest.run("lora", "train", "--model-path", STORIES);
        assertEquals(1, r.code());
        assertTrue(r.err().contains("not implemented yet"), r.err());
        r = JunoCliTest.run("merge", "-m", STORIES, "--lora", lora.toString(), "--output", dir.resolve("m.gguf").toString());
        assertNotEquals(0, r.code());
        assertTrue(r.err().contains("was made for base"), r.err());
        assertTrue(!java.nio.file.Files.exists(dir.resolve("m.gguf")), "nothing half-written");
    }
}
