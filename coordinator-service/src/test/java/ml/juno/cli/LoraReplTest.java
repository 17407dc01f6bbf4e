package ml.juno.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import ml.juno.engine.lora.LoraAdapter;
import ml.juno.engine.lora.LoraFile;
import ml.juno.engine.lora.LoraPair;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code juno lora -m M}, the interactive trainer, fed lines as a terminal would: /train and /train-qa lower their
 * sequences' loss, the chat then answers the trained question with the trained answer, /save writes a trained adapter,
 * /reset starts over, and bad commands are told apart.
 */
class LoraReplTest {
    @TempDir
    Path dir;

    private static String run(Path dir, String... lines) throws Exception {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        ArrayDeque<String> in = new ArrayDeque<>(List.of(lines));
        picocli.CommandLine cl = new picocli.CommandLine(new LoraCommand());
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        cl.parseArgs("-m", LoraCommandsTest.STORIES, "--targets", "q,v,o,down", "--lr", "5e-3", "--steps", "60", "--max-tokens", "16",
                "--output", dir.resolve("default.lora").toString());
        LoraCommand cmd = cl.getCommand();
        assertEquals(0, cmd.interactive(prompt -> in.poll()));
        return out.toString();
    }

    @Test
    void trainTrainQaChatSaveReset_throughTheLines() throws Exception {
        Path saved = dir.resolve("tim.lora");
        String out = run(dir, "/help", "/status", "/train The purple robot danced with the old moon every night.",
                "/train-qa Who is Tim? | Tim is a big red dog.", "/status", "Who is Tim?", "/save " + saved, "/save", "/reset", "/status", "Who is Tim?",
                "/train", "/train-qa no bar here", "/bogus", "/train-file " + dir.resolve("missing.txt"), "/exit");
        System.out.println(out);
        assertTrue(out.contains("/train-qa QUESTION | ANSWER"), "help: " + out);
        Matcher m = Pattern.compile("loss ([0-9.]+) -> ([0-9.]+)").matcher(out);
        int trained = 0;
        while (m.find()) {
            double before = Double.parseDouble(m.group(1));
            double after = Double.parseDouble(m.group(2));
            assertTrue(after < 0.5 * before, "loss " + before + " -> " + after);
            trained++;
        }
        assertEquals(2, trained, out);
        assertTrue(out.contains("the question in 3 phrasings (3 sequences)"), out);
        assertTrue(out.contains("trained 120 steps in 2 commands on 4 sequences"), out);
        assertTrue(out.contains("\nTim is a big red dog."), "the chat answers as trained: " + out);
        assertEquals(out.indexOf("\nTim is a big red dog."), out.lastIndexOf("\nTim is a big red dog."), "after /reset it does not: " + out);
        assertTrue(out.contains("conversation: 0 messages") && out.contains("trained 0 steps in 0 commands"), "after /reset: " + out);
        assertTrue(out.contains("error: usage: /train TEXT") && out.contains("error: usage: /train-qa QUESTION | ANSWER")
                && out.contains("unknown command /bogus") && out.contains("error: file not found"), out);
        LoraAdapter a = LoraFile.read(saved);
        float max = 0;
        for (LoraPair p : a.pairs()) {
            for (float v : p.b()) {
                max = Math.max(max, Math.abs(v));
            }
        }
        assertTrue(max > 0, "the saved adapter is trained (B is no longer zero)");
        assertTrue(Files.isRegularFile(dir.resolve("default.lora")), "/save without a path writes --output");
    }

    @Test
    void withoutLines_itEnds_andMixtureOfExpertsFfnTargetsAreRefused() throws Exception {
        assertTrue(run(dir).contains("Interactive LoRA trainer"));
        String moe = LoraCommandsTest.MODELS.resolve("testdata/tiny-random/tiny-qwen3moe-random-Q8_0.gguf").toString();
        JunoCliTest.Run r = JunoCliTest.run("lora", "-m", moe, "--targets", "q,gate");
        assertEquals(1, r.code());
        assertTrue(r.err().contains("qwen3moe") && r.err().contains("'gate'") && r.err().contains("mixture of"), r.err());
    }

    @Test
    void otherArchitectures_train() throws Exception {
        String qwen2 = LoraCommandsTest.MODELS.resolve("testdata/tiny-random/tiny-qwen2-random-Q8_0.gguf").toString();
        StringWriter out = new StringWriter();
        ArrayDeque<String> in = new ArrayDeque<>(List.of("/train The purple robot danced with the old moon every night.", "/exit"));
        picocli.CommandLine cl = new picocli.CommandLine(new LoraCommand());
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(new StringWriter(), true));
        cl.parseArgs("-m", qwen2, "--targets", "q,k,v,o,gate,up,down", "--lr", "1e-2", "--steps", "20", "--max-tokens", "4",
                "--output", dir.resolve("q.lora").toString());
        LoraCommand cmd = cl.getCommand();
        assertEquals(0, cmd.interactive(prompt -> in.poll()));
        Matcher m = Pattern.compile("loss ([0-9.]+) -> ([0-9.]+)").matcher(out.toString());
        assertTrue(m.find(), out.toString());
        assertTrue(Double.parseDouble(m.group(2)) < 0.8 * Double.parseDouble(m.group(1)), out.toString());
    }
}
