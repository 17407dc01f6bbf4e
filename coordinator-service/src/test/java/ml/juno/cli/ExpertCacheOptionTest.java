package ml.juno.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import ml.juno.engine.moe.ExpertBudget;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

/** {@code --expert-cache SIZE} on every command that runs a model: parsed, refused when bad, passed on, reported by bench. */
class ExpertCacheOptionTest {

    static final String MOE = GenerateCommandTest.MODELS.resolve("testdata/tiny-random/tiny-qwen3moe-random-Q8_0.gguf").toString();

    private String before;

    @BeforeEach
    void remember() {
        before = System.getProperty(ExpertBudget.PROPERTY);
    }

    @AfterEach
    void restore() {
        if (before == null) {
            System.clearProperty(ExpertBudget.PROPERTY);
        } else {
            System.setProperty(ExpertBudget.PROPERTY, before);
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"generate", "bench", "local", "node", "cluster", "test"})
    void aBadSize_isAUsageError_sayingWhatIsAccepted(String command) {
        List<String> args = new ArrayList<>(List.of(command, "--expert-cache", "lots"));
        if (command.equals("generate")) {
            args.addAll(List.of("--prompt", "Once"));
        }
        JunoCliTest.Run r = JunoCliTest.run(args.toArray(String[]::new));
        assertEquals(2, r.code(), r.err());
        String first = r.err().lines().findFirst().orElse("");
        assertTrue(first.contains("--expert-cache") && first.contains("bad expert cache size 'lots'") && first.contains("2GiB"), first);
        assertEquals("", r.out(), "nothing ran");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"generate", "bench", "local", "node", "cluster", "test"})
    void everyCommandThatRunsAModel_documentsTheFlag(String command) {
        JunoCliTest.Run r = JunoCliTest.run(command, "--help");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("--expert-cache=SIZE"), r.out());
        assertTrue(r.out().contains("JUNO_EXPERT_CACHE"), r.out());
    }

    @Test
    void serverCommands_passTheSizeToTheJvmThatRunsTheModel_onlyWhenGiven() {
        LocalCommand local = new LocalCommand();
        new CommandLine(local).parseArgs("--model-path", MOE, "--expert-cache", "25%");
        assertEquals("25%", local.properties().get(ExpertBudget.PROPERTY));
        NodeCommand node = new NodeCommand();
        new CommandLine(node).parseArgs("--port", "19999", "--expert-cache", "2GiB");
        assertEquals("2GiB", node.properties().get(ExpertBudget.PROPERTY));
        ClusterCommand cluster = new ClusterCommand();
        new CommandLine(cluster).parseArgs("-m", MOE, "--expert-cache", "0");
        assertEquals("0", cluster.expertCache.properties().get(ExpertBudget.PROPERTY));
        TestCommand test = new TestCommand();
        new CommandLine(test).parseArgs("-m", MOE, "--expert-cache", "512MiB");
        List<String> cmd = test.clusterCommand(java.nio.file.Path.of(MOE), "pipeline", "FLOAT32", 18080, java.nio.file.Path.of("logs"));
        int i = cmd.indexOf("--expert-cache");
        assertTrue(i > 0 && cmd.get(i + 1).equals("512MiB"), cmd.toString());
        NodeCommand unset = new NodeCommand();
        new CommandLine(unset).parseArgs("--port", "19999");
        Map<String, String> p = unset.properties();
        assertFalse(p.containsKey(ExpertBudget.PROPERTY) && before == null, p.toString());
    }

    /** A real bench of the tiny MoE model with experts streamed at budget 0: every expert use is a read. */
    @Test
    void bench_reportsTheStreamedExperts_textAndJson() throws Exception {
        JunoCliTest.Run r = JunoCliTest.run("bench", "-m", MOE, "-t", "1", "-p", "8", "-n", "4", "-r", "1",
                "--expert-cache", "0", "--json");
        assertEquals(0, r.code(), r.err());
        JsonNode e = new ObjectMapper().readTree(r.out()).path("experts");
        assertEquals(0, e.path("cache_slots").asInt(), e.toString());
        assertEquals(0.0, e.path("tg").path("hit_rate").asDouble(), e.toString());
        assertTrue(e.path("tg").path("bytes_per_token").asDouble() > 0, e.toString());
        assertTrue(e.path("pp").path("reads").asLong() > 0, e.toString());

        JunoCliTest.Run text = JunoCliTest.run("bench", "-m", MOE, "-t", "1", "-p", "8", "-n", "4", "-r", "1",
                "--expert-cache", "100%");
        assertEquals(0, text.code(), text.err());
        assertTrue(text.out().contains("experts: streamed, cache"), text.out());
        assertTrue(text.out().lines().anyMatch(l -> l.startsWith("experts tg: hit rate 100.0%")), text.out());
    }
}
