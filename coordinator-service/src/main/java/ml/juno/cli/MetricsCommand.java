package ml.juno.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import ml.juno.coordinator.jfr.Latency;
import ml.juno.coordinator.jfr.RecordingSummarizer;
import ml.juno.coordinator.jfr.RecordingSummary;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code juno metrics}: sums up JFR recordings of a run (one per JVM) into throughput and latency figures. */
@Command(name = "metrics", mixinStandardHelpOptions = true,
        description = {"Summarise JFR recordings (from --jfr DURATION): tokens/s, time to first token, step latency.",
                "Also p50/p95/p99 step latency, forward passes per shard and prefix-cache hits. Several files are one run."})
final class MetricsCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Parameters(arity = "1..*", paramLabel = "FILE", description = "JFR recordings (.jfr).")
    List<Path> files;

    @Option(names = "--json", paramLabel = "OUT", description = "Also write the summary as JSON to OUT ('-' = standard output instead of the text).")
    Path json;

    @Override
    public Integer call() throws IOException {
        RecordingSummary s = RecordingSummarizer.summarize(files);
        PrintWriter out = spec.commandLine().getOut();
        boolean jsonToStdout = json != null && json.toString().equals("-");
        if (json != null) {
            String text = mapper().writeValueAsString(s);
            if (jsonToStdout) {
                out.println(text);
            } else {
                Files.writeString(json, text + "\n");
            }
        }
        if (!jsonToStdout) {
            print(s, out);
        }
        out.flush();
        return 0;
    }

    static ObjectMapper mapper() {
        return new ObjectMapper().setPropertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
                .enable(SerializationFeature.INDENT_OUTPUT);
    }

    static void print(RecordingSummary s, PrintWriter out) {
        out.println("recordings: " + String.join(", ", s.files()));
        out.printf(Locale.ROOT, "requests: %d   tokens: %d   busy %.2f s   span %.2f s%n", s.requests(), s.tokens(),
                s.busySeconds(), s.spanSeconds());
        out.printf(Locale.ROOT, "tokens/s: %.2f while generating, %.2f over the span%n", s.tokensPerSecond(),
                s.wallTokensPerSecond());
        line(out, "time to first token", s.timeToFirstToken());
        line(out, "step latency", s.stepLatency());
        RecordingSummary.Steps st = s.steps();
        out.printf(Locale.ROOT, "steps: %d (prefill tokens %d, decode rows %d, %.2f rows per step)%n", st.count(),
                st.prefillTokens(), st.decodeTokens(), st.meanBatchRows());
        for (RecordingSummary.ShardPasses p : s.forwardPasses()) {
            line(out, String.format(Locale.ROOT, "forward layers %d-%d slice %d/%d (%d rows)", p.firstLayer(),
                    p.endLayer() - 1, p.tensorRank(), p.tensorParts(), p.rows()), p.latency());
        }
        RecordingSummary.KvTotals kv = s.kvCache();
        if (kv.admissions() > 0) {
            out.printf(Locale.ROOT, "prefix cache: %d admissions, %d hit / %d miss tokens (%.1f%%), %d evictions%n",
                    kv.admissions(), kv.hitTokens(), kv.missTokens(), 100 * kv.hitRate(), kv.evictions());
        }
        line(out, "tokenizer", s.tokenizer());
        line(out, "chat template", s.templates());
        line(out, "matmul", s.matMul());
    }

    private static void line(PrintWriter out, String what, Latency l) {
        if (l.count() == 0) {
            return;
        }
        out.printf(Locale.ROOT, "%s: n=%d mean %.3f ms, p50 %.3f ms, p95 %.3f ms, p99 %.3f ms, max %.3f ms%n", what,
                l.count(), l.meanMs(), l.p50Ms(), l.p95Ms(), l.p99Ms(), l.maxMs());
    }
}
