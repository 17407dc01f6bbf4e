package ml.juno.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import ml.juno.engine.kernel.Backends;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BenchCommandTest {

    private String backendBefore;

    @BeforeEach
    void remember() {
        backendBefore = System.getProperty(BackendOption.PROPERTY);
    }

    /** --backend sets juno.backend in this JVM, as it would in the CLI's; put back what was there. */
    @AfterEach
    void restore() {
        BackendOptionTest.restoreBackendProperty(backendBefore);
    }

    @Test
    void json_reportsPromptAndGenerationSpeed_modelBytesAndBandwidth() throws Exception {
        JunoCliTest.Run r = JunoCliTest.run("bench", "-m", GenerateCommandTest.STORIES, "-t", "1", "-p", "16", "-n", "8",
                "-r", "2", "--json");
        assertEquals(0, r.code(), r.err());
        JsonNode o = new ObjectMapper().readTree(r.out());
        for (String k : new String[] {"pp_tps", "tg_tps", "tg_gbps", "read_gbps", "tg_bound_tps"}) {
            assertTrue(o.get(k).asDouble() > 0, k + " in " + o);
        }
        assertTrue(o.get("pp_stddev").asDouble() >= 0 && o.get("tg_stddev").asDouble() >= 0);
        assertEquals(1171200, o.get("model_bytes").asLong()); // the tensors of stories260K.gguf
        assertEquals(1, o.get("threads").asInt());
        String[] auto = BackendOptionTest.expected(Backends.requestedKind());
        assertEquals(auto[0], o.path("backend").asText(), "which kernels ran, in " + o);
        assertEquals(auto[1], o.path("isa").asText(), o.toString());
    }

    /**
     * {@code --cold} times a pp and a tg that start from disk after an untimed warm-up: with every expert read each
     * time (a cache of 0) the timed runs' telemetry shows only their own reads, none a hit; memory-mapped, the page
     * cache is dropped without a complaint.
     */
    @Test
    void cold_timesRunsThatReadFromDisk_afterAWarmUp() throws Exception {
        String moe = Path.of(System.getProperty("juno.models.dir", "../models"), "testdata", "tiny-random", "tiny-qwen3moe-random-Q4_K_M.gguf")
                .toString();
        JunoCliTest.Run r = JunoCliTest.run("bench", "-m", moe, "-t", "1", "-p", "6", "-n", "5", "-r", "1", "--cold",
                "--json", "--expert-cache", "0");
        assertEquals(0, r.code(), r.err());
        assertTrue(!r.err().contains("page cache may be warm"), r.err());
        JsonNode o = new ObjectMapper().readTree(r.out());
        assertTrue(o.get("cold").asBoolean());
        JsonNode tg = o.path("experts").path("tg");
        assertEquals(0.0, tg.get("hit_rate").asDouble(), o.toString());
        // 5 tokens, 2 layers, 2 experts a token each: 20 misses, each at least one read; the warm-up's are not counted
        assertTrue(tg.get("reads").asLong() >= 20 && tg.get("reads").asLong() <= 20 * 3, o.toString());
        JunoCliTest.Run mapped = JunoCliTest.run("bench", "-m", moe, "-t", "1", "-p", "6", "-n", "5", "-r", "1", "--cold", "--json");
        assertEquals(0, mapped.code(), mapped.err());
        assertTrue(!mapped.err().contains("page cache may be warm"), mapped.err());
        assertTrue(new ObjectMapper().readTree(mapped.out()).get("tg_tps").asDouble() > 0);
    }

    @Test
    void nodes_badSplitOrWireOrColdStart_areRefusedBeforeAnyNodeStarts() {
        JunoCliTest.Run split = JunoCliTest.run("bench", "-m", GenerateCommandTest.STORIES, "--nodes", "2", "--pType", "diagonal");
        assertTrue(split.code() != 0 && split.err().contains("unknown parallelism 'diagonal'"), split.err());
        JunoCliTest.Run wire = JunoCliTest.run("bench", "-m", GenerateCommandTest.STORIES, "--nodes", "2", "--dtype", "INT4");
        assertTrue(wire.code() != 0 && wire.err().contains("INT4"), wire.err());
        JunoCliTest.Run cold = JunoCliTest.run("bench", "-m", GenerateCommandTest.STORIES, "--nodes", "2", "--cold");
        assertTrue(cold.code() != 0 && cold.err().contains("--cold"), cold.err());
        JunoCliTest.Run none = JunoCliTest.run("bench", "-m", GenerateCommandTest.STORIES, "--nodes", "0");
        assertTrue(none.code() != 0 && none.err().contains("--nodes must be in 1..64"), none.err());
    }

    @Test
    void backendJava_runsAndReportsTheJavaKernels_inJsonAndText() throws Exception {
        JunoCliTest.Run r = JunoCliTest.run("bench", "-m", GenerateCommandTest.STORIES, "-t", "1", "-p", "8", "-n", "4",
                "-r", "1", "--backend", "java", "--json");
        assertEquals(0, r.code(), r.err());
        JsonNode o = new ObjectMapper().readTree(r.out());
        String[] java = BackendOptionTest.expected(Backends.Kind.JAVA);
        assertEquals("java", o.path("backend").asText(), o.toString());
        assertEquals(java[1], o.path("isa").asText(), o.toString());

        JunoCliTest.Run text = JunoCliTest.run("bench", "-m", GenerateCommandTest.STORIES, "-t", "1", "-p", "8", "-n", "4",
                "-r", "1", "--backend", "java");
        assertEquals(0, text.code(), text.err());
        assertTrue(text.out().lines().anyMatch(l -> l.equals("backend: java (" + java[1] + ")")), text.out());
    }

    @Test
    void backendNative_runsWhereverItIsAsked_nativeWhereTheLibraryLoads_elseJava() throws Exception {
        JunoCliTest.Run r = JunoCliTest.run("bench", "-m", GenerateCommandTest.STORIES, "-t", "1", "-p", "8", "-n", "4",
                "-r", "1", "--backend", "native", "--json");
        assertEquals(0, r.code(), "never a crash: " + r.err());
        JsonNode o = new ObjectMapper().readTree(r.out());
        String[] nat = BackendOptionTest.expected(Backends.Kind.NATIVE);
        assertEquals(nat[0], o.path("backend").asText(), o.toString());
        assertEquals(nat[1], o.path("isa").asText(), o.toString());
    }

    /**
     * As {@code ./juno bench --backend native} on a machine where the library cannot load (here: a library file that is
     * not there): a JVM of its own, since the native library loads once per JVM. It runs on Java, and says so once.
     */
    @Test
    void backendNative_whereTheLibraryCannotLoad_runsOnJava_withOneLogLine(@TempDir Path dir) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(AppProcess.javaExecutable());
        cmd.addAll(AppProcess.JVM_FLAGS);
        cmd.addAll(List.of("-Djuno.native.library=" + dir.resolve("no-such-libjunocpu.so"), "-cp", System.getProperty("java.class.path"),
                Juno.class.getName(), "bench", "-m", GenerateCommandTest.STORIES, "-t", "1", "-p", "4", "-n", "2", "-r", "1",
                "--backend", "native", "--json"));
        Path out = dir.resolve("out.txt");
        Path err = dir.resolve("err.txt");
        Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "bench did not finish");
        String stderr = Files.readString(err);
        assertEquals(0, p.exitValue(), stderr);
        JsonNode o = new ObjectMapper().readTree(Files.readString(out));
        assertEquals("java", o.path("backend").asText(), o.toString());
        assertEquals(BackendOptionTest.expected(Backends.Kind.JAVA)[1], o.path("isa").asText(), o.toString());
        long lines = stderr.lines().filter(l -> l.contains("Juno backend:")).count();
        assertEquals(1, lines, stderr);
        assertTrue(stderr.contains("Juno backend: java, native kernels unavailable: cannot load the native library"), stderr);
    }

    @Test
    void concurrency_reportsAggregateSpeedAndTtftPerLevel() throws Exception {
        JunoCliTest.Run r = JunoCliTest.run("bench", "-m", GenerateCommandTest.STORIES, "-t", "1", "-p", "8", "-n", "6",
                "--concurrency", "1,3", "--json");
        assertEquals(0, r.code(), r.err());
        JsonNode runs = new ObjectMapper().readTree(r.out()).get("runs");
        assertEquals(2, runs.size());
        assertEquals(1, runs.get(0).get("concurrency").asInt());
        assertEquals(3, runs.get(1).get("concurrency").asInt());
        for (JsonNode run : runs) {
            assertTrue(run.get("tg_tps").asDouble() > 0, run.toString());
            assertTrue(run.get("ttft_ms").asDouble() > 0, run.toString());
        }
        JsonNode o = new ObjectMapper().readTree(r.out());
        String[] auto = BackendOptionTest.expected(Backends.requestedKind());
        assertEquals(auto[0], o.path("backend").asText(), o.toString());
        assertEquals(auto[1], o.path("isa").asText(), o.toString());
    }

    @Test
    void concurrency_withBackendJava_reportsJava_inJsonAndText() throws Exception {
        JunoCliTest.Run r = JunoCliTest.run("bench", "-m", GenerateCommandTest.STORIES, "-t", "1", "-p", "4", "-n", "3",
                "--concurrency", "2", "--backend", "java", "--json");
        assertEquals(0, r.code(), r.err());
        JsonNode o = new ObjectMapper().readTree(r.out());
        assertEquals("java", o.path("backend").asText(), o.toString());
        assertEquals(BackendOptionTest.expected(Backends.Kind.JAVA)[1], o.path("isa").asText(), o.toString());
        JunoCliTest.Run text = JunoCliTest.run("bench", "-m", GenerateCommandTest.STORIES, "-t", "1", "-p", "4", "-n", "3",
                "--concurrency", "2", "--backend", "java");
        assertEquals(0, text.code(), text.err());
        assertTrue(text.out().lines().anyMatch(l -> l.startsWith("backend: java (vector")), text.out());
    }

    @Test
    void badArguments_areOneLineErrors() {
        JunoCliTest.Run missing = JunoCliTest.run("bench", "-m", "/nonexistent/model.gguf");
        assertEquals(1, missing.code());
        assertEquals("juno: model file not found: /nonexistent/model.gguf", missing.err().strip());
        JunoCliTest.Run zero = JunoCliTest.run("bench", "-m", GenerateCommandTest.STORIES, "--concurrency", "0");
        assertEquals(1, zero.code());
        assertEquals("juno: --concurrency values must be at least 1, got 0", zero.err().strip());
    }
}
