package ml.juno.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import ml.juno.e2e.harness.Shell;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code juno matrix} on a short grid (src-test-e2e/matrix/smoke.yaml): real servers, every output written and consistent. */
class MatrixIT {
    static final Path ROOT = Path.of(System.getProperty("juno.root", "..")).toAbsolutePath().normalize();

    private static List<String> juno(String... args) {
        return ml.juno.e2e.harness.JunoCli.command(args);
    }

    @Test
    void aShortMatrix_runsEveryConfiguration_andWritesTsvJsonAndASelfContainedReport(@TempDir Path out) throws Exception {
        Shell.Result r = Shell.run(juno("matrix", "--scenarios", ROOT.resolve("src-test-e2e/matrix/smoke.yaml").toString(), "--out", out.toString()),
                ROOT, Map.of(), Duration.ofMinutes(5));
        assertEquals(0, r.exitCode(), r.describe());
        List<String> tsv = Files.readAllLines(out.resolve("matrix.tsv"));
        assertEquals(1 + 2 * 2 + 2, tsv.size(), "a header and one row per run (local c1, c2; pipeline c2; 2 repetitions):\n" + tsv);
        for (String row : tsv.subList(1, tsv.size())) {
            String[] f = row.split("\t");
            assertEquals("0", f[9], "no errors: " + row);
            int c = Integer.parseInt(f[4]);
            assertEquals(c * 8L, Long.parseLong(f[10]), "every request generated its 8 tokens: " + row);
            assertTrue(Double.parseDouble(f[12]) > 0 && Double.parseDouble(f[13]) > 0, "tokens/s and TTFT measured: " + row);
        }
        JsonNode json = new ObjectMapper().readTree(out.resolve("matrix.json").toFile());
        assertEquals(6, json.get("runs").size());
        assertEquals(3, json.get("medians").size(), "one median per configuration");
        String html = Files.readString(out.resolve("report.html"));
        assertTrue(html.contains("var uPlot"), "uPlot inlined");
        assertTrue(html.contains("new uPlot("), "the charts drawn with it");
        assertFalse(html.contains("src=\"http") || html.contains("href=\"http"), "the report loads nothing from the network");
        assertTrue(html.contains("pipeline x2 FLOAT16 c2 p8 g8"), "the table names every configuration");

        Shell.Result same = Shell.run(juno("matrix", "--compare", out.resolve("matrix.json").toString(), out.resolve("matrix.json").toString()),
                ROOT, Map.of(), Duration.ofMinutes(1));
        assertEquals(0, same.exitCode(), same.describe());
        assertEquals(3, same.out().lines().filter(l -> l.contains(" 1.000 ")).count(), "a run compared with itself: ratio 1\n" + same.out());
    }

    @Test
    void aBadScenarioFile_isOneLineError_beforeAnythingStarts(@TempDir Path dir) throws Exception {
        Path bad = Files.writeString(dir.resolve("bad.yaml"), "scenarios:\n  - name: x\n    mode: diagonal\n    concurrency: [1]\n    prompt_tokens: [8]\n    gen_tokens: [8]\n");
        Shell.Result r = Shell.run(juno("matrix", "--scenarios", bad.toString(), "--out", dir.resolve("out").toString()), ROOT, Map.of(),
                Duration.ofMinutes(1));
        assertEquals(1, r.exitCode(), r.describe());
        assertTrue(r.err().contains("mode must be local, pipeline or tensor, got diagonal"), r.describe());
        assertFalse(Files.exists(dir.resolve("out")), "nothing written");
    }
}
