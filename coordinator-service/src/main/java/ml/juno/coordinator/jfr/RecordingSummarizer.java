package ml.juno.coordinator.jfr;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import ml.juno.coordinator.jfr.RecordingSummary.KvTotals;
import ml.juno.coordinator.jfr.RecordingSummary.ShardPasses;
import ml.juno.coordinator.jfr.RecordingSummary.Steps;

/**
 * Reads JFR recordings (streamed with {@link RecordingFile}, never loaded whole) and sums up Juno's events into a
 * {@link RecordingSummary}. Several files are one run: a coordinator's and its nodes'.
 */
public final class RecordingSummarizer {
    private static final String FORWARD_PASS = "juno.ForwardPass"; // gpu-ffi's ForwardPassEvent.NAME
    private static final String MAT_MUL = "juno.MatMul";

    private final Samples steps = new Samples();
    private final Samples firstTokens = new Samples();
    private final Samples tokenizer = new Samples();
    private final Samples templates = new Samples();
    private final Samples matMuls = new Samples();
    private final Map<String, ShardAcc> shards = new TreeMap<>();
    private long tokens;
    private long prefill;
    private long decode;
    private long batchRows;
    private long admissions;
    private long hitTokens;
    private long missTokens;
    private long evictions;
    private Instant first;
    private Instant last;

    private RecordingSummarizer() {}

    /**
     * Summarises {@code files}.
     *
     * @throws IOException when a file is missing or not a JFR recording, or when no file holds any Juno event
     */
    public static RecordingSummary summarize(List<Path> files) throws IOException {
        if (files.isEmpty()) {
            throw new IllegalArgumentException("no recording given");
        }
        RecordingSummarizer s = new RecordingSummarizer();
        List<String> names = new ArrayList<>();
        long seen = 0;
        for (Path f : files) {
            if (!Files.isRegularFile(f)) {
                throw new NoSuchFileException(f.toString());
            }
            seen += s.read(f);
            names.add(f.toString());
        }
        if (seen == 0) {
            throw new IOException("no Juno events in " + String.join(", ", names)
                    + " (record with 'juno local --jfr DURATION', or enable the juno.* events)");
        }
        return s.summary(names);
    }

    private long read(Path file) throws IOException {
        long count = 0;
        try (RecordingFile in = new RecordingFile(file)) {
            while (in.hasMoreEvents()) {
                RecordedEvent e = in.readEvent();
                String name = e.getEventType().getName();
                if (name.startsWith("juno.")) {
                    count++;
                    accept(name, e);
                }
            }
        } catch (IOException e) {
            throw new IOException(file + " is not a readable JFR recording: " + e.getMessage(), e);
        }
        return count;
    }

    private void accept(String name, RecordedEvent e) {
        switch (name) {
            case SchedulerStepEvent.NAME -> {
                steps.add(e.getDuration().toNanos());
                prefill += e.getInt("prefillTokens");
                decode += e.getInt("decodeTokens");
                batchRows += e.getInt("batchRows");
                seen(e.getStartTime());
                seen(e.getEndTime());
            }
            case TokenProducedEvent.NAME -> {
                tokens++;
                if (e.getInt("index") == 1) {
                    firstTokens.add(e.getLong("sinceSubmit"));
                }
                seen(e.getStartTime());
            }
            case FORWARD_PASS -> {
                String key = e.getInt("firstLayer") + "-" + e.getInt("endLayer") + "/" + e.getInt("tensorRank") + "-"
                        + e.getInt("tensorParts");
                shards.computeIfAbsent(key, k -> new ShardAcc(e)).add(e);
            }
            case KvCacheEvent.NAME -> {
                admissions++;
                hitTokens += e.getInt("hitTokens");
                missTokens += e.getInt("missTokens");
                evictions += e.getLong("evictions");
            }
            case TokenizerEvent.NAME -> tokenizer.add(e.getDuration().toNanos());
            case TemplateFormatEvent.NAME -> templates.add(e.getDuration().toNanos());
            case MAT_MUL -> matMuls.add(e.getDuration().toNanos());
            default -> { } // a Juno event this summary does not use
        }
    }

    private void seen(Instant t) {
        if (first == null || t.isBefore(first)) {
            first = t;
        }
        if (last == null || t.isAfter(last)) {
            last = t;
        }
    }

    private RecordingSummary summary(List<String> files) {
        double busy = steps.total() / 1e9;
        double span = first == null ? 0 : Duration.between(first, last).toNanos() / 1e9;
        List<ShardPasses> passes = new ArrayList<>();
        for (ShardAcc a : shards.values()) {
            passes.add(new ShardPasses(a.firstLayer, a.endLayer, a.tensorRank, a.tensorParts, a.rows, a.samples.latency()));
        }
        return new RecordingSummary(List.copyOf(files), firstTokens.n, tokens, busy, span,
                busy > 0 ? tokens / busy : 0, span > 0 ? tokens / span : 0, firstTokens.latency(), steps.latency(),
                new Steps(steps.n, prefill, decode, steps.n == 0 ? 0 : (double) batchRows / steps.n), passes,
                new KvTotals(admissions, hitTokens, missTokens, evictions), tokenizer.latency(), templates.latency(),
                matMuls.latency());
    }

    /** A growable list of durations in nanoseconds. */
    private static final class Samples {
        long[] nanos = new long[256];
        int n;

        void add(long v) {
            if (n == nanos.length) {
                nanos = Arrays.copyOf(nanos, n * 2);
            }
            nanos[n++] = v;
        }

        long total() {
            long t = 0;
            for (int i = 0; i < n; i++) {
                t += nanos[i];
            }
            return t;
        }

        Latency latency() {
            return Latency.of(nanos, n);
        }
    }

    private static final class ShardAcc {
        final int firstLayer;
        final int endLayer;
        final int tensorRank;
        final int tensorParts;
        final Samples samples = new Samples();
        long rows;

        ShardAcc(RecordedEvent e) {
            firstLayer = e.getInt("firstLayer");
            endLayer = e.getInt("endLayer");
            tensorRank = e.getInt("tensorRank");
            tensorParts = e.getInt("tensorParts");
        }

        void add(RecordedEvent e) {
            rows += e.getInt("rows");
            samples.add(e.getDuration().toNanos());
        }
    }
}
