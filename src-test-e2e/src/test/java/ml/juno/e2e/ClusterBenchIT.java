package ml.juno.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import ml.juno.e2e.harness.JunoCli;
import ml.juno.e2e.harness.Shell;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code juno bench --nodes 2} on the bundled model, pipeline and tensor: two real node processes, the coordinator's
 * engine in the CLI; the JSON carries every field of the in-process benchmark plus the cluster's, and the wire
 * counters add up (tokens counted per test, one hop per node per step, bytes per token above zero, rank-to-rank
 * partials only with tensor parallelism, every hop through shared memory on this host unless it is turned off).
 */
class ClusterBenchIT {
    static final ObjectMapper JSON = new ObjectMapper();
    static final int P = 8;
    static final int N = 4;
    static final int REPS = 2;

    static JsonNode bench(Path logs, String... extra) throws Exception {
        return bench(logs, Map.of(), extra);
    }

    static JsonNode bench(Path logs, Map<String, String> env, String... extra) throws Exception {
        List<String> args = new ArrayList<>(List.of("bench", "--nodes", "2", "-p", Integer.toString(P), "-n", Integer.toString(N),
                "-r", Integer.toString(REPS), "--warm-up", "16", "--json", "--log-dir", logs.toString())); // 4 warm-up runs: not counted below
        args.addAll(List.of(extra));
        Shell.Result r = Shell.run(JunoCli.command(args.toArray(String[]::new)), JunoCli.ROOT, env, Duration.ofMinutes(3));
        assertEquals(0, r.exitCode(), r.describe());
        String line = r.out().lines().filter(l -> l.startsWith("{")).reduce((a, b) -> b).orElseThrow(() -> new AssertionError(r.describe()));
        return JSON.readTree(line);
    }

    private static JsonNode local;

    /** The in-process benchmark's JSON (run once). */
    static synchronized JsonNode local() throws Exception {
        if (local == null) {
            Shell.Result r = Shell.run(JunoCli.command("bench", "-t", "1", "-p", "4", "-n", "2", "-r", "1", "--json"), JunoCli.ROOT, Map.of(),
                    Duration.ofMinutes(2));
            assertEquals(0, r.exitCode(), r.describe());
            local = JSON.readTree(r.out().lines().filter(l -> l.startsWith("{")).reduce((a, b) -> b).orElseThrow());
        }
        return local;
    }

    static Set<String> fields(JsonNode o) {
        Set<String> out = new TreeSet<>();
        o.fieldNames().forEachRemaining(out::add);
        return out;
    }

    /** Whether the coordinator and nodes of one host can share memory here (Linux with a writable /dev/shm). */
    static boolean sharedMemory() {
        return System.getProperty("os.name").equals("Linux") && Files.isWritable(Path.of("/dev/shm"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"pipeline", "tensor", "pipeline by gRPC"})
    void benchOverTwoNodeProcesses_reportsTheLocalFields_andWireCountersThatAddUp(String run, @TempDir Path logs) throws Exception {
        JsonNode localJson = local();
        String pType = run.split(" ")[0];
        boolean grpc = run.endsWith("by gRPC"); // the coordinator keeps its steps on the stream: JUNO_CONTROL_SHM=0
        JsonNode o = bench(logs, grpc ? Map.of("JUNO_CONTROL_SHM", "0") : Map.of(), "--pType", pType);
        assertTrue(fields(o).containsAll(fields(localJson)), "every field of the local benchmark: " + fields(localJson) + " in " + fields(o));
        assertEquals(2, o.get("nodes").asInt());
        assertEquals(pType, o.get("ptype").asText());
        assertEquals(P, o.get("pp_tokens").asInt());
        assertEquals(N, o.get("tg_tokens").asInt());
        assertTrue(o.get("pp_tps").asDouble() > 0 && o.get("tg_tps").asDouble() > 0, o.toString());
        assertTrue(Files.isRegularFile(Path.of(o.get("log_dir").asText()).resolve("node-1.log")), "a log per node in " + o.get("log_dir"));

        JsonNode pp = o.get("wire").get("pp");
        JsonNode tg = o.get("wire").get("tg");
        assertEquals((long) REPS * P, pp.get("tokens").asLong(), "pp computes the prompt tokens of each repetition: " + pp);
        assertEquals((long) REPS * N, tg.get("tokens").asLong(), "tg computes one token per step: " + tg);
        assertEquals((long) REPS * N, tg.get("steps").asLong(), tg.toString());
        for (JsonNode w : List.of(pp, tg)) {
            assertEquals(2 * w.get("steps").asLong(), w.get("hops").asLong(), "one hop per node per step: " + w);
            assertTrue(w.get("bytes_per_token").asDouble() > 0 && w.get("ms_per_hop").asDouble() > 0, w.toString());
            double sum = (w.get("bytes_sent").asLong() + w.get("bytes_received").asLong() + w.get("peer_bytes").asLong())
                    / (double) w.get("tokens").asLong();
            assertEquals(sum, w.get("bytes_per_token").asDouble(), 1e-9, w.toString());
            // the nodes are on the coordinator's host: their steps go through shared memory unless turned off
            assertEquals(sharedMemory() && !grpc ? w.get("hops").asLong() : 0, w.get("shm_hops").asLong(), w.toString());
            if (pType.equals("tensor")) {
                assertTrue(w.get("peer_bytes").asLong() > 0 && w.get("reductions").asLong() > 0, "the ranks all-reduce with each other: " + w);
            } else {
                assertEquals(0, w.get("reductions").asLong(), w.toString());
            }
        }
    }

    @Test
    void pinnedConcurrencyRun_putsEachNodeOnItsOwnCore_andCountsTheWirePerLevel(@TempDir Path logs) throws Exception {
        if (Runtime.getRuntime().availableProcessors() < 2) { // then --pin must refuse, clearly
            Shell.Result r = Shell.run(JunoCli.command("bench", "--nodes", "2", "--pin", "--log-dir", logs.toString()), JunoCli.ROOT, Map.of(),
                    Duration.ofMinutes(1));
            assertTrue(r.exitCode() != 0 && r.err().contains("--pin puts each process on a core of its own"), r.describe());
            return;
        }
        JsonNode o = bench(logs, "--pType", "tensor", "--pin", "--concurrency", "2");
        assertTrue(o.get("pinned").asBoolean(), o.toString());
        assertEquals(1, o.get("threads_per_node").asInt(), "one thread per pinned node: " + o);
        assertTrue(o.get("node_cpus").get(0).asInt() != o.get("node_cpus").get(1).asInt(), "a core each: " + o);
        JsonNode run = o.get("runs").get(0);
        assertEquals(2, run.get("concurrency").asInt());
        JsonNode w = run.get("wire");
        // two requests of P prompt tokens and N generated: the last generated token of each is never fed back
        assertEquals(2L * (P + N - 1), w.get("tokens").asLong(), w.toString());
        assertTrue(w.get("bytes_per_token").asDouble() > 0, w.toString());
    }
}
