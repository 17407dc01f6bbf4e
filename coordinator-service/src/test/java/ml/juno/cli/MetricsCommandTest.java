package ml.juno.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code juno metrics} on a recording of {@code juno generate} run in this JVM. */
class MetricsCommandTest {

    @TempDir
    Path tmp;

    @Test
    void recordedGenerate_printsThroughputLatenciesAndWritesJson() throws Exception {
        Path file = tmp.resolve("generate.jfr");
        try (Recording recording = new Recording(Configuration.getConfiguration("default"))) {
            recording.start();
            JunoCliTest.Run gen = JunoCliTest.run("generate", "-m", LocalCommandTest.MODEL, "--prompt", "Once upon a time",
                    "-n", "16", "--temperature", "0", "--ignore-eos", "-t", "2", "--json");
            assertEquals(0, gen.code(), gen.err());
            recording.stop();
            recording.dump(file);
        }
        Path json = tmp.resolve("summary.json");
        JunoCliTest.Run r = JunoCliTest.run("metrics", file.toString(), "--json", json.toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("requests: 1   tokens: 16"), r.out());
        assertTrue(r.out().contains("tokens/s: "), r.out());
        assertTrue(r.out().contains("time to first token: n=1 "), r.out());
        assertTrue(r.out().contains("step latency: n="), r.out());
        assertTrue(r.out().contains("forward layers 0-4 slice 0/1"), r.out());

        JsonNode j = new ObjectMapper().readTree(Files.readString(json));
        assertEquals(16, j.get("tokens").asLong());
        assertEquals(1, j.get("requests").asLong());
        assertTrue(j.get("tokens_per_second").asDouble() > 0, j.toString());
        assertTrue(j.get("time_to_first_token").get("p50_ms").asDouble() > 0, j.toString());
        JsonNode step = j.get("step_latency");
        assertTrue(step.get("count").asLong() >= 16, step.toString());
        assertTrue(step.get("p50_ms").asDouble() > 0 && step.get("p50_ms").asDouble() <= step.get("p99_ms").asDouble(), step.toString());
        assertEquals(5, j.get("forward_passes").get(0).get("end_layer").asInt());

        JunoCliTest.Run toStdout = JunoCliTest.run("metrics", file.toString(), "--json", "-");
        assertEquals(0, toStdout.code(), toStdout.err());
        assertEquals(16, new ObjectMapper().readTree(toStdout.out()).get("tokens").asLong(), "only JSON on stdout");
    }

    @Test
    void missingOrForeignFile_isOneLineErrorWithExitCode1() throws Exception {
        JunoCliTest.Run missing = JunoCliTest.run("metrics", tmp.resolve("nope.jfr").toString());
        assertEquals(1, missing.code());
        assertEquals("juno: no such file: " + tmp.resolve("nope.jfr"), missing.err().strip());
        Path text = Files.writeString(tmp.resolve("x.jfr"), "hello");
        JunoCliTest.Run foreign = JunoCliTest.run("metrics", text.toString());
        assertEquals(1, foreign.code());
        assertTrue(foreign.err().startsWith("juno: " + text + " is not a readable JFR recording"), foreign.err());
        JunoCliTest.Run none = JunoCliTest.run("metrics");
        assertEquals(2, none.code(), "a FILE is required");
    }

    @Test
    void serverRecordings_areNamedAfterTheModel_andSummarisedWhenTheServerStops() throws Exception {
        JfrOptions jfr = new JfrOptions();
        new picocli.CommandLine(jfr).parseArgs("--jfr", "5m", "--jfr-dir", tmp.toString());
        jfr.model(Path.of(LocalCommandTest.MODEL));
        java.io.StringWriter none = new java.io.StringWriter();
        jfr.printSummary(new java.io.PrintWriter(none, true));
        Path local = jfr.file("local");
        assertTrue(local.getFileName().toString().matches("juno-stories260K-\\d{8}-\\d{6}\\.jfr"), local.toString());
        assertTrue(jfr.file("node-2").getFileName().toString().matches("juno-node-2-stories260K-\\d{8}-\\d{6}\\.jfr"));
        assertEquals(local, jfr.file("coordinator"), "the coordinator's recording is named as local's");
        java.io.StringWriter nothing = new java.io.StringWriter();
        jfr.printSummary(new java.io.PrintWriter(nothing, true));
        assertEquals("juno: no JFR recording was written", nothing.toString().strip());

        try (Recording recording = new Recording(Configuration.getConfiguration("default"))) {
            recording.start();
            JunoCliTest.Run gen = JunoCliTest.run("generate", "-m", LocalCommandTest.MODEL, "--prompt", "Once upon a time",
                    "-n", "8", "--temperature", "0", "--ignore-eos", "-t", "1", "--json");
            assertEquals(0, gen.code(), gen.err());
            recording.stop();
            recording.dump(local);
        }
        java.io.StringWriter out = new java.io.StringWriter();
        jfr.printSummary(new java.io.PrintWriter(out, true));
        assertTrue(out.toString().startsWith("JFR summary (as 'juno metrics " + local + "'):"), out.toString());
        assertTrue(out.toString().contains("requests: 1   tokens: 8"), out.toString());
    }
}
