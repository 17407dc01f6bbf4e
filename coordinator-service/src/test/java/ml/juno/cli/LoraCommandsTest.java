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
    void nodeLoraPlay_passesTheAbsoluteAdaptersToTheNode_andRefusesAMissingFile() throws Exception {
        Path lora = dir.resolve("n.lora");
        LoraFile.write(lora, adapter(STORIES, 7, 0.1f));
        NodeCommand node = new NodeCommand();
        new picocli.CommandLine(node).parseArgs("--port", "19999", "--lora-play", lora + ":0.5");
        assertEquals(lora.toAbsolutePath() + ":0.5", node.properties().get("juno.node.lora-play"));
        NodeCommand none = new NodeCommand();
        new picocli.CommandLine(none).parseArgs("--port", "19999");
        assertEquals(null, none.properties().get("juno.node.lora-play"), "no adapter unless asked");
        NodeCommand missing = new NodeCommand();
        new picocli.CommandLine(missing).parseArgs("--port", "19999", "--lora-play", dir.resolve("absent.lora").toString());
        CliException e = org.junit.jupiter.api.Assertions.assertThrows(CliException.class, missing::properties);
        org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("not found"), e.getMessage());
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
    void loraTrain_lowersTheTextsLoss_theModelThenContinuesIt_andTheSameSeedWritesTheSameFile() throws Exception {
        Path text = dir.resolve("story.txt");
        java.nio.file.Files.writeString(text, "The purple robot danced with the old moon every night, and the stars sang along.");
        Path a = dir.resolve("a.lora");
        String[] train = {"lora", "train", "-m", STORIES, "--data", text.toString(), "--output", a.toString(), "--targets", "q,v,o,down",
                "--rank", "8", "--alpha", "16", "--lr", "5e-3", "--max-steps", "120", "--seq-len", "64", "--val-split", "0", "--seed", "3"};
        JunoCliTest.Run r = JunoCliTest.run(train);
        assertEquals(0, r.code(), r.err());
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("loss ([0-9.]+) -> ([0-9.]+)").matcher(r.out());
        assertTrue(m.find(), r.out());
        double before = Double.parseDouble(m.group(1));
        double after = Double.parseDouble(m.group(2));
        System.out.println("juno lora train on stories260K: " + r.out().trim());
        assertTrue(after < 0.3 * before, "loss " + before + " -> " + after);
        JunoCliTest.Run g = JunoCliTest.run("generate", "-m", STORIES, "--prompt", "The purple robot", "-n", "12", "--temperature", "0",
                "--lora-play", a.toString());
        assertEquals(0, g.code(), g.err());
        assertTrue(g.out().startsWith(" danced with the old moon"), "continues the trained text: " + g.out());
        Path b = dir.resolve("b.lora");
        train[7] = b.toString();
        assertEquals(0, JunoCliTest.run(train).code());
        assertArrayEquals(java.nio.file.Files.readAllBytes(a), java.nio.file.Files.readAllBytes(b), "same seed, same adapter bit for bit");
    }

    @Test
    void loraTrain_onMessages_withValidationBatchesDropoutAndCheckpoints_resumesToTheSameFile() throws Exception {
        Path jsonl = dir.resolve("chat.jsonl");
        StringBuilder lines = new StringBuilder();
        String[][] qa = {{"Who is Tim?", "Tim is a big dog."}, {"Who is Sue?", "Sue is a small cat."}, {"Who is Max?", "Max is a red bird."}};
        for (String[] x : qa) {
            lines.append("{\"messages\": [{\"role\": \"user\", \"content\": \"").append(x[0])
                    .append("\"}, {\"role\": \"assistant\", \"content\": \"").append(x[1]).append("\"}]}\n");
        }
        java.nio.file.Files.writeString(jsonl, lines);
        Path a = dir.resolve("a.lora");
        String[] train = {"lora", "train", "-m", STORIES, "--data", jsonl.toString(), "--output", a.toString(), "--lr", "5e-3",
                "--max-steps", "10", "--val-split", "0.34", "--batch-tokens", "64", "--dropout", "0.05", "--checkpoint-every", "4",
                "--seed", "2"};
        JunoCliTest.Run r = JunoCliTest.run(train);
        assertEquals(0, r.code(), r.err());
        System.out.println("juno lora train on messages: " + r.out().trim());
        assertTrue(r.out().contains("10 steps on 2 chunks") && r.out().contains("(best, step ") && r.out().contains("a.lora.ckpt"), r.out());
        assertTrue(r.err().contains("val "), "the progress line shows the validation loss: " + r.err());
        Path ckpt = dir.resolve("a.lora.ckpt");
        assertTrue(ml.juno.engine.lora.LoraCheckpoint.isCheckpoint(ckpt));
        assertEquals(8, ml.juno.engine.lora.LoraCheckpoint.read(ckpt).steps(), "the last checkpoint: step 8");
        LoraAdapter trained = LoraFile.read(a);
        assertEquals("0.05", trained.header().training().get("dropout"));
        assertEquals("64", trained.header().training().get("batch-tokens"));

        Path b = dir.resolve("b.lora");
        String[] resume = java.util.Arrays.copyOf(train, train.length + 2);
        resume[7] = b.toString();
        resume[train.length] = "--resume";
        resume[train.length + 1] = a.toString();
        r = JunoCliTest.run(resume);
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("resuming") && r.err().contains("at step 8 of 10"), r.err());
        assertArrayEquals(java.nio.file.Files.readAllBytes(a), java.nio.file.Files.readAllBytes(b), "resumed = uninterrupted, bit for bit");

        String[] otherLr = resume.clone();
        otherLr[9] = "4e-3";
        r = JunoCliTest.run(otherLr);
        assertNotEquals(0, r.code());
        assertTrue(r.err().contains("lr"), r.err());
        String[] noCkpt = resume.clone();
        noCkpt[noCkpt.length - 1] = b.toString();
        java.nio.file.Files.deleteIfExists(dir.resolve("b.lora.ckpt"));
        r = JunoCliTest.run(noCkpt);
        assertNotEquals(0, r.code());
        assertTrue(r.err().contains("not a training checkpoint") && r.err().contains("b.lora.ckpt"), r.err());
    }

    @Test
    void loraTrain_badData_isNamedByFileAndLine_beforeTraining() throws Exception {
        Path empty = dir.resolve("empty.txt");
        java.nio.file.Files.writeString(empty, "");
        Path out = dir.resolve("x.lora");
        JunoCliTest.Run r = JunoCliTest.run("lora", "train", "-m", STORIES, "--data", empty.toString(), "--output", out.toString());
        assertNotEquals(0, r.code());
        assertTrue(r.err().contains("no training text"), r.err());
        Path jsonl = dir.resolve("d.jsonl");
        java.nio.file.Files.writeString(jsonl, "{\"text\": \"Once upon a time\"}\n{\"txt\": \"no\"}\n");
        r = JunoCliTest.run("lora", "train", "-m", STORIES, "--data", jsonl.toString(), "--output", out.toString());
        assertNotEquals(0, r.code());
        assertTrue(r.err().contains("d.jsonl:2") && r.err().contains("\"text\""), r.err());
        java.nio.file.Files.writeString(jsonl, "{\"text\": \"Once upon a time\"}\n{not json\n");
        r = JunoCliTest.run("lora", "train", "-m", STORIES, "--data", jsonl.toString(), "--output", out.toString());
        assertTrue(r.err().contains("d.jsonl:2: not a JSON object"), r.err());
        r = JunoCliTest.run("lora", "train", "-m", MODELS.resolve("testdata/tiny-random/tiny-qwen2-random-F16.gguf").toString(),
                "--data", jsonl.toString().replace("d.jsonl", "empty.txt"), "--output", out.toString());
        assertNotEquals(0, r.code());
        assertTrue(!java.nio.file.Files.exists(out), "nothing written");
    }

    @Test
    void loraTrain_onGemma3_writesAnAdapter_andQwen3moeFfnTargetsAreRefusedBeforeAnythingIsWritten() throws Exception {
        Path text = dir.resolve("t.txt");
        java.nio.file.Files.writeString(text, "The purple robot danced with the old moon every night, and the moon sang back to it.");
        Path out = dir.resolve("g.lora");
        JunoCliTest.Run r = JunoCliTest.run("lora", "train", "-m", MODELS.resolve("testdata/tiny-random/tiny-gemma3-random-Q8_0.gguf").toString(),
                "--data", text.toString(), "--output", out.toString(), "--targets", "q,k,v,o,gate,up,down", "--max-steps", "4",
                "--seq-len", "24", "--val-split", "0", "--lr", "1e-2");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("wrote " + out), r.out());
        assertEquals("gemma3", LoraFile.read(out).header().base().architecture());
        Path moe = dir.resolve("m.lora");
        r = JunoCliTest.run("lora", "train", "-m", MODELS.resolve("testdata/tiny-random/tiny-qwen3moe-random-Q8_0.gguf").toString(),
                "--data", text.toString(), "--output", moe.toString(), "--targets", "q,v,down");
        assertNotEquals(0, r.code());
        assertTrue(r.err().contains("'down'") && r.err().contains("qwen3moe") && r.err().contains("q, k, v, o"), r.err());
        assertTrue(!java.nio.file.Files.exists(moe), "nothing written");
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
        r = JunoCliTest.run("merge", "-m", STORIES, "--lora", lora.toString(), "--output", dir.resolve("m.gguf").toString());
        assertNotEquals(0, r.code());
        assertTrue(r.err().contains("was made for base"), r.err());
        assertTrue(!java.nio.file.Files.exists(dir.resolve("m.gguf")), "nothing half-written");
    }
}
