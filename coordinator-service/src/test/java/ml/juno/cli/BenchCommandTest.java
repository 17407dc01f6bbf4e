package ml.juno.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

class BenchCommandTest {

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
