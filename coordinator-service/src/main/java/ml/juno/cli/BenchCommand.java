package ml.juno.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import ml.juno.coordinator.cluster.ClusterStats;
import ml.juno.coordinator.cluster.Parallelism;

import ml.juno.coordinator.engine.BackendInfo;
import ml.juno.coordinator.engine.EngineAssembly;
import ml.juno.coordinator.engine.EngineConfig;
import ml.juno.coordinator.engine.GenerationListener;
import ml.juno.coordinator.engine.InferenceEngine;
import ml.juno.coordinator.sampling.FinishReason;
import ml.juno.coordinator.sampling.SamplingParams;
import ml.juno.coordinator.sampling.StopCondition;
import ml.juno.coordinator.sampling.TokenLogprobs;
import ml.juno.coordinator.scheduler.GenerationRequest;
import ml.juno.coordinator.scheduler.SubmitResult;
import ml.juno.coordinator.scheduler.Usage;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufTensorInfo;
import ml.juno.engine.kernel.Backends;
import ml.juno.engine.kv.KvType;
import ml.juno.engine.model.Bench;
import ml.juno.engine.model.BenchResult;
import ml.juno.engine.model.EngineOptions;
import ml.juno.engine.model.InferenceSession;
import ml.juno.engine.model.Model;
import ml.juno.engine.moe.ExpertStats;
import ml.juno.engine.moe.PageCache;
import ml.juno.model.wire.ActivationDtype;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code juno bench}: llama-bench style prompt-processing and generation speed of one sequence, or, with
 * {@code --concurrency}, aggregate generation speed and time to first token of N concurrent requests through the
 * scheduler and generation loop (continuous batching). With {@code --nodes N} both run through a real local cluster
 * (N node processes as {@code juno cluster} starts them, the coordinator's engine in this process) and also report the
 * bytes on the wire per token and the time per hop from the cluster's own counters; {@code --pin} puts each process on
 * a core of its own.
 */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = {"Measure speed llama-bench style: pp<P> and tg<N> tokens/s (mean ± stddev over reps), model bytes and decode GB/s.",
                "With --concurrency 1,4,8,16: N concurrent requests of -p prompt / -n new tokens (default 32/32) through the scheduler; aggregate tok/s and TTFT per level.",
                "With --nodes N: the same through a real local cluster of N node processes (--pType pipeline|tensor), plus bytes on the wire per token and time per hop (with --concurrency also each node's utilisation: its compute time over the level's wall time).",
                "All say which kernels ran: a line 'backend: native (avx512vnni)', or \"backend\" and \"isa\" with --json."})
final class BenchCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Mixin
    ModelOption model;

    @Mixin
    BackendOption backend = new BackendOption();

    @Mixin
    ExpertCacheOption expertCache = new ExpertCacheOption();

    @Mixin
    LoraPlayOption lora = new LoraPlayOption();

    @Option(names = {"-t", "--threads"}, defaultValue = "0", description = "Compute threads (default: all cores).")
    int threads;

    @Option(names = {"-p", "--n-prompt"}, paramLabel = "P", description = "Prompt tokens (default: 128; 32 with --concurrency).")
    Integer prompt;

    @Option(names = {"-n", "--n-gen"}, paramLabel = "N", description = "Generated tokens (default: 64; 32 with --concurrency).")
    Integer gen;

    @Option(names = {"-r", "--repetitions"}, defaultValue = "5", description = "Timed repetitions, after one warm-up (default: ${DEFAULT-VALUE}; --concurrency runs each level once).")
    int reps;

    @Option(names = "--concurrency", split = ",", paramLabel = "N,N,...", description = "Concurrent request counts to measure, e.g. 1,4,8,16.")
    List<Integer> concurrency;

    @Option(names = "--cache-type", defaultValue = "f16", paramLabel = "f32|f16", description = "KV cache element type (default: ${DEFAULT-VALUE}, as llama-bench).")
    String cacheType;

    @Option(names = "--json", description = "Print one JSON object.")
    boolean json;

    @Option(names = "--nodes", paramLabel = "N",
            description = "Run through a real local cluster: N node processes on loopback ports (plaintext gRPC, one log each in --log-dir) and the coordinator's engine in this process; pp and tg go through the scheduler as requests.")
    Integer nodes;

    @Option(names = "--pType", defaultValue = "pipeline", paramLabel = "pipeline|tensor",
            description = "With --nodes: how the model is split over them (default: ${DEFAULT-VALUE}).")
    String parallelism;

    @Option(names = "--dtype", defaultValue = "FLOAT16", paramLabel = "FLOAT16|INT8|FLOAT32",
            description = "With --nodes: activations and partial sums on the wire (default: ${DEFAULT-VALUE}).")
    String dtype;

    @Option(names = "--pin", description = "Each process on a core of its own (taskset): with --nodes each node on one of the cores this process may use "
            + "(an error when there are fewer cores than nodes), this process on the next core if one is left (else it shares theirs); "
            + "without --nodes this process on its first core. -t then defaults to 1.")
    boolean pin;

    @Option(names = "--warm-up", defaultValue = "1024", paramLabel = "TOKENS",
            description = "With --nodes: tokens generated untimed before the timed runs (single stream: tg runs; with --concurrency: "
                    + "levels at the highest concurrency), so that the step path of every process (gRPC, the scheduler, the "
                    + "nodes' hand-offs) is compiled: it runs a few tokens a second and the JIT compiles it late, ~3 ms a token "
                    + "slower over the first few hundred (default: ${DEFAULT-VALUE}; 0: one run, as without --nodes).")
    int warmUpTokens;

    @Option(names = "--log-dir", defaultValue = "juno-logs", paramLabel = "DIR",
            description = "With --nodes: folder of the node logs, one run folder per bench (default: ${DEFAULT-VALUE}).")
    Path logDir;

    @Option(names = "--cold", description = "Start with the model on disk: after untimed pp and tg runs of at least "
            + Bench.WARM_UP_TOKENS + " tokens each (the code compiled), the model file's pages are dropped from the OS "
            + "page cache (posix_fadvise DONTNEED, this process's mapping released first) and the expert cache is "
            + "emptied; then pp and tg are timed without warm-ups, tg going on from pp's state (use -r 1). The matrices the "
            + "native backend copied into huge pages at load stay in memory (JUNO_RESIDENT_WEIGHTS=0: every weight from disk).")
    boolean cold;

    @Override
    public Integer call() throws IOException, InterruptedException {
        Path path = model.resolve();
        KvType kv = CacheTypes.parse(cacheType);
        if (threads < 0) {
            throw new CliException("-t must be at least 0, got " + threads);
        }
        if (reps < 1) {
            throw new CliException("-r must be at least 1, got " + reps);
        }
        if (warmUpTokens < 0) {
            throw new CliException("--warm-up must be at least 0, got " + warmUpTokens);
        }
        backend.applyToThisJvm();
        expertCache.applyToThisJvm();
        if (nodes != null) {
            return cluster(path, kv);
        }
        if (pin) {
            CpuPinning.requireTaskset();
            CpuPinning.pinThisProcess(CpuPinning.allowedCpus().getFirst());
        }
        int t = threads > 0 ? threads : pin ? 1 : Runtime.getRuntime().availableProcessors();
        if (concurrency != null) {
            return concurrent(path, kv, t, prompt != null ? prompt : 32, gen != null ? gen : 32);
        }
        return single(path, kv, t, prompt != null ? prompt : 128, gen != null ? gen : 64);
    }

    private static void checkCounts(int p, int n) {
        if (p < 1 || n < 1) {
            throw new CliException("-p and -n must be at least 1, got " + p + " and " + n);
        }
    }

    private int single(Path path, KvType kv, int t, int p, int n) throws IOException, InterruptedException {
        checkCounts(p, n);
        PrintWriter out = spec.commandLine().getOut();
        try (GgufFile file = GgufFile.open(path)) {
            long modelBytes = 0;
            long params = 0;
            for (GgufTensorInfo ti : file.tensors()) {
                modelBytes += ti.byteSize();
                params += ti.elementCount();
            }
            BenchResult pp;
            BenchResult tg;
            long stepBytes;
            BackendInfo ran;
            ExpertStats ppExperts = null;
            ExpertStats tgExperts = null;
            ExpertStats ppFrom = null;
            ExpertStats tgFrom = null;
            try (Model m = load(file, new EngineOptions(t, Math.max(p, n), kv, Math.min(p, 512), 1));
                 InferenceSession s = m.newSession()) {
                if (Math.max(p, n) > s.contextLength()) {
                    throw new CliException("-p/-n of " + Math.max(p, n) + " exceed the model's context of " + s.contextLength());
                }
                // the expert telemetry of the timed runs only: a snapshot before the first, another after the last
                ExpertStats[] first = new ExpertStats[1];
                Bench bench = new Bench(s, !cold, rep -> {
                    if (rep == 0) {
                        first[0] = m.expertStats();
                    }
                });
                if (cold) { // compiled first, then the bytes dropped once: pp reads what it needs, tg goes on from there
                    bench.warmUp(p, n);
                    coldStart(m, file);
                }
                pp = bench.pp(p, reps);
                ppFrom = first[0];
                ppExperts = m.expertStats();
                tg = bench.tg(n, reps);
                tgFrom = first[0];
                tgExperts = m.expertStats();
                stepBytes = m.weightBytes();
                ran = BackendInfo.of(m.backend());
            }
            double bandwidth = BandwidthProbe.measure(t);
            double bound = bandwidth / stepBytes;
            if (json) {
                ObjectNode o = new ObjectMapper().createObjectNode();
                o.put("pp_tps", pp.tokensPerSecond());
                o.put("pp_stddev", pp.stddev());
                o.put("tg_tps", tg.tokensPerSecond());
                o.put("tg_stddev", tg.stddev());
                o.put("model_bytes", modelBytes);
                o.put("tg_gbps", tg.gbPerSecond());
                o.put("threads", t);
                o.put("step_bytes", stepBytes);
                o.put("read_gbps", bandwidth / 1e9);
                o.put("tg_bound_tps", bound);
                o.put("pp_tokens", p);
                o.put("tg_tokens", n);
                o.put("reps", reps);
                o.put("backend", ran.kind());
                o.put("isa", ran.isa());
                o.put("cold", cold);
                if (tgExperts != null) {
                    ObjectNode e = o.putObject("experts");
                    ExpertsReport.json(e.putObject("pp"), ExpertsReport.of(ppFrom, ppExperts));
                    ExpertsReport.json(e.putObject("tg"), ExpertsReport.of(tgFrom, tgExperts));
                    e.put("budget_bytes", tgExperts.tier().budgetBytes());
                    e.put("slot_bytes", tgExperts.tier().slotBytes());
                    e.put("cache_slots", tgExperts.tier().cacheSlots());
                    e.put("direct_io", tgExperts.tier().direct());
                    e.put("preloaded_bytes", tgExperts.tier().preloadBytes());
                    e.put("preload_s", tgExperts.tier().preloadNanos() / 1e9);
                    ArrayNode layers = e.putArray("layer_hit_rate"); // whole run, per MoE layer
                    for (ExpertStats.LayerHits l : tgExperts.layers()) {
                        layers.add(l.hitRate());
                    }
                }
                out.println(new ObjectMapper().writeValueAsString(o));
            } else {
                String name = path.getFileName().toString().replaceFirst("\\.gguf$", "");
                out.println("| model | size | params | threads | test | t/s |");
                out.println("| --- | ---: | ---: | ---: | ---: | ---: |");
                for (BenchResult r : List.of(pp, tg)) {
                    out.println(String.format(Locale.ROOT, "| %s | %.2f MiB | %.2f M | %d | %s | %.2f ± %.2f |", name,
                            modelBytes / 1048576.0, params / 1e6, t, r.test(), r.tokensPerSecond(), r.stddev()));
                }
                out.println(String.format(Locale.ROOT,
                        "tg reads %.1f MiB of weights per token: %.2f GB/s; memory read bandwidth ≈ %.1f GB/s (%d threads) → bound ≈ %.1f tok/s",
                        stepBytes / 1048576.0, tg.gbPerSecond(), bandwidth / 1e9, t, bound));
                out.println("backend: " + ran);
                if (tgExperts != null) {
                    ExpertStats.Tier tier = tgExperts.tier();
                    out.println(String.format(Locale.ROOT, "experts: streamed, cache %.1f MiB (%d slots of %.2f MiB), %s%s",
                            tier.budgetBytes() / 1048576.0, tier.cacheSlots(), tier.slotBytes() / 1048576.0,
                            tier.direct() ? "O_DIRECT" : "page cache", tier.preloadBytes() == 0 ? ""
                                    : String.format(Locale.ROOT, ", every expert read at open (%.1f MiB in %.2f s)",
                                    tier.preloadBytes() / 1048576.0, tier.preloadNanos() / 1e9)));
                    out.println("experts " + ExpertsReport.of(ppFrom, ppExperts).text("pp"));
                    out.println("experts " + ExpertsReport.of(tgFrom, tgExperts).text("tg"));
                }
            }
            out.flush();
            return 0;
        }
    }

    /**
     * {@code --cold} after the warm-up: the expert cache emptied (a full one read again) and the model file's pages
     * dropped from the page cache, so the timed runs read from disk what they need; says so if the page cache could
     * not be dropped.
     */
    private void coldStart(Model m, GgufFile file) {
        if (m.expertStore() != null) {
            m.expertStore().empty();
        }
        String why = PageCache.dropMapped(file.path(), file.segment());
        if (why != null) {
            spec.commandLine().getErr().println("juno: --cold: " + why + "; the page cache may be warm");
        }
    }

    /** {@code --nodes}: starts the node processes (pinned with {@code --pin}) and runs the benchmark through them. */
    private int cluster(Path path, KvType kv) throws IOException, InterruptedException {
        if (nodes < 1 || nodes > 64) {
            throw new CliException("--nodes must be in 1..64, got " + nodes);
        }
        if (cold) {
            throw new CliException("--cold empties this process's caches; it does not apply with --nodes");
        }
        Parallelism par;
        ActivationDtype wire;
        try {
            par = Parallelism.parse(parallelism);
            wire = ActivationDtype.parse(dtype);
        } catch (IllegalArgumentException e) {
            throw new CliException(e.getMessage());
        }
        int p = prompt != null ? prompt : concurrency != null ? 32 : 128;
        int n = gen != null ? gen : concurrency != null ? 32 : 64;
        checkCounts(p, n);
        List<Integer> nodeCpus = null;
        Integer coordinatorCpu = null;
        if (pin) {
            CpuPinning.requireTaskset();
            List<Integer> allowed = CpuPinning.allowedCpus();
            nodeCpus = CpuPinning.assign(nodes, allowed);
            coordinatorCpu = allowed.size() > nodes ? allowed.get(nodes) : null;
        }
        int perNode = threads > 0 ? threads : pin ? 1 : 0; // 0: each node all its cores
        int shown = perNode > 0 ? perNode : Runtime.getRuntime().availableProcessors();
        Path nodeApp = JunoHome.requireApp(JunoHome.detect().nodeApp());
        Map<String, String> nodeProps = new LinkedHashMap<>(backend.properties());
        nodeProps.putAll(expertCache.properties());
        // the nodes' read bandwidth, measured before they start: their cores together
        double bandwidth = concurrency == null ? BandwidthProbe.measure(Math.min(nodes * shown, Runtime.getRuntime().availableProcessors())) : 0;
        Path runLogs = RunLogs.create(logDir, "bench").toAbsolutePath();
        try (BenchNodes started = BenchNodes.start(nodeApp, nodes, nodeProps, path.toRealPath().getParent(), runLogs, nodeCpus)) {
            if (coordinatorCpu != null) {
                CpuPinning.pinThisProcess(coordinatorCpu);
            }
            BenchCluster c = new BenchCluster(started, par, wire, perNode, shown, nodeCpus, coordinatorCpu, runLogs,
                    ml.juno.coordinator.engine.EngineLora.play(lora.specs()));
            if (concurrency != null) {
                return concurrent(path, kv, shown, p, n, c);
            }
            return singleCluster(path, kv, shown, p, n, c, bandwidth);
        }
    }

    /**
     * pp and tg as {@link Bench} measures them, through the cluster's engine: pp one request of {@code p} random prompt
     * tokens and one generated (submit to first token), tg one request of a one-token prompt and {@code n} generated
     * ({@code n} single-row steps from an empty context, submit to last token); one untimed warm-up of pp, and of tg
     * as many as {@code --warm-up} asks for (at least one).
     */
    private int singleCluster(Path path, KvType kv, int t, int p, int n, BenchCluster c, double bandwidth)
            throws IOException, InterruptedException {
        PrintWriter out = spec.commandLine().getOut();
        long modelBytes = 0;
        long params = 0;
        long stepBytes = 0;
        try (GgufFile file = GgufFile.open(path)) {
            long embdRow = 0;
            long embd = 0;
            boolean output = false;
            for (GgufTensorInfo ti : file.tensors()) {
                modelBytes += ti.byteSize();
                params += ti.elementCount();
                if (ml.juno.engine.gguf.TensorNames.layerOf(ti.name()) >= 0) {
                    stepBytes += ti.byteSize();
                } else if (ti.name().equals(ml.juno.engine.gguf.TensorNames.OUTPUT + ".weight")) {
                    stepBytes += ti.byteSize();
                    output = true;
                } else if (ti.name().equals(ml.juno.engine.gguf.TensorNames.TOKEN_EMBD + ".weight")) {
                    embd = ti.byteSize();
                    embdRow = ti.rowBytes();
                }
            }
            stepBytes += embdRow + (output ? 0 : embd); // one embedding row; the whole matrix when it is the output too
        }
        EngineConfig config = new EngineConfig(path, t, Math.max(p, n) + 1, kv, 0, 1, Math.min(p, 512), 1);
        double[] ppRates = new double[reps];
        double[] tgRates = new double[reps];
        ClusterStats ppWire;
        ClusterStats tgWire;
        BackendInfo ran;
        try (InferenceEngine engine = c.open(config)) {
            if (Math.max(p, n) + 1 > engine.info().contextLength()) {
                throw new CliException("-p/-n of " + Math.max(p, n) + " exceed the model's context of " + engine.info().contextLength());
            }
            SplittableRandom random = new SplittableRandom(1234);
            timedRequest(engine, random, p, 1); // warm-up
            ClusterStats before = c.stats();
            for (int r = 0; r < reps; r++) {
                ppRates[r] = p / timedRequest(engine, random, p, 1);
            }
            ppWire = c.stats().minus(before);
            int warm = 0;
            do { // at least one warm-up run; more until --warm-up tokens have been generated
                timedRequest(engine, random, 1, n);
                warm += n;
            } while (warm < warmUpTokens);
            before = c.stats();
            for (int r = 0; r < reps; r++) {
                tgRates[r] = n / timedRequest(engine, random, 1, n);
            }
            tgWire = c.stats().minus(before);
            ran = engine.backend();
        }
        BenchResult pp = result("pp" + p, p, ppRates, 0);
        BenchResult tg = result("tg" + n, n, tgRates, stepBytes);
        double bound = bandwidth / stepBytes;
        if (json) {
            ObjectMapper mapper = new ObjectMapper();
            ObjectNode o = mapper.createObjectNode();
            o.put("pp_tps", pp.tokensPerSecond());
            o.put("pp_stddev", pp.stddev());
            o.put("tg_tps", tg.tokensPerSecond());
            o.put("tg_stddev", tg.stddev());
            o.put("model_bytes", modelBytes);
            o.put("tg_gbps", tg.gbPerSecond());
            o.put("threads", t);
            o.put("step_bytes", stepBytes);
            o.put("read_gbps", bandwidth / 1e9);
            o.put("tg_bound_tps", bound);
            o.put("pp_tokens", p);
            o.put("tg_tokens", n);
            o.put("reps", reps);
            o.put("backend", ran.kind());
            o.put("isa", ran.isa());
            o.put("cold", false);
            c.json(o);
            ObjectNode w = o.putObject("wire");
            BenchCluster.wireJson(w.putObject("pp"), ppWire);
            BenchCluster.wireJson(w.putObject("tg"), tgWire);
            out.println(mapper.writeValueAsString(o));
        } else {
            String name = path.getFileName().toString().replaceFirst("\\.gguf$", "");
            out.println("| model | size | params | threads | test | t/s |");
            out.println("| --- | ---: | ---: | ---: | ---: | ---: |");
            for (BenchResult r : List.of(pp, tg)) {
                out.println(String.format(Locale.ROOT, "| %s | %.2f MiB | %.2f M | %d | %s | %.2f ± %.2f |", name,
                        modelBytes / 1048576.0, params / 1e6, t, r.test(), r.tokensPerSecond(), r.stddev()));
            }
            out.println(String.format(Locale.ROOT,
                    "tg reads %.1f MiB of weights per token: %.2f GB/s; memory read bandwidth of the nodes' cores ≈ %.1f GB/s → bound ≈ %.1f tok/s",
                    stepBytes / 1048576.0, tg.gbPerSecond(), bandwidth / 1e9, bound));
            out.println("backend: " + ran);
            out.println(c.describe());
            out.println(BenchCluster.wireText(pp.test(), ppWire));
            out.println(BenchCluster.wireText(tg.test(), tgWire));
        }
        out.flush();
        return 0;
    }

    /** Mean ± sample stddev of {@code rates}, as {@link Bench} reports them; GB/s from {@code stepBytes} per token. */
    private static BenchResult result(String test, int tokens, double[] rates, long stepBytes) {
        double mean = 0;
        for (double x : rates) {
            mean += x;
        }
        mean /= rates.length;
        double var = 0;
        for (double x : rates) {
            var += (x - mean) * (x - mean);
        }
        double sd = rates.length > 1 ? Math.sqrt(var / (rates.length - 1)) : 0;
        return new BenchResult(test, tokens, rates.length, mean, sd, stepBytes * mean / 1e9);
    }

    /** Seconds from submitting one request of {@code p} random prompt tokens to its {@code n}-th (last) greedy token. */
    private static double timedRequest(InferenceEngine engine, SplittableRandom random, int p, int n) throws InterruptedException {
        int vocab = engine.info().vocabSize();
        int[] tokens = new int[p];
        for (int j = 0; j < p; j++) {
            tokens[j] = 3 + random.nextInt(vocab - 3);
        }
        CountDownLatch done = new CountDownLatch(1);
        Timed x = new Timed(done, n);
        SubmitResult r = engine.submit(new GenerationRequest(tokens, SamplingParams.greedy(), StopCondition.of(n), 0, -1), x);
        if (r instanceof SubmitResult.Rejected rej) {
            throw new CliException("request rejected: " + rej.reason());
        }
        if (!done.await(30, TimeUnit.MINUTES)) {
            throw new CliException("benchmark did not finish in 30 minutes");
        }
        if (x.reason != FinishReason.LENGTH || x.tokens != n) {
            throw new CliException("benchmark request ended with " + x.reason.wireName() + " after " + x.tokens + " tokens " + x.message);
        }
        return (x.times[n - 1] - x.submitted) / 1e9;
    }

    private Model load(GgufFile file, EngineOptions options) {
        Model m;
        try {
            m = Model.load(file, options, Backends::select);
        } catch (IllegalArgumentException e) {
            throw new CliException("cannot run " + file.path() + ": " + e.getMessage());
        }
        try {
            if (!lora.loraPlay.isEmpty()) {
                ml.juno.engine.lora.LoraPlan.apply(m, ml.juno.engine.lora.LoraAdapters.play(lora.specs(), file));
            }
            return m;
        } catch (java.io.IOException | IllegalArgumentException e) {
            m.close();
            throw new CliException(e.getMessage());
        }
    }

    /** One timed request: submit time, first token, finish. Runs on the request's output thread. */
    private static final class Timed implements GenerationListener {
        final CountDownLatch done;
        final long submitted = System.nanoTime();
        final long[] times; // [n] arrival of each token
        int tokens;
        FinishReason reason;
        String message;

        Timed(CountDownLatch done, int n) {
            this.done = done;
            this.times = new long[n];
        }

        @Override
        public void onToken(int choice, int tokenId, String text, TokenLogprobs logprobs) {
            times[tokens++] = System.nanoTime();
        }

        @Override
        public void onChoiceFinished(int choice, FinishReason r, Usage usage, String m) {
            reason = r;
            message = m;
            done.countDown();
        }
    }

    /** One concurrency level; {@code wire} is what its requests cost on a cluster's wire (null in process). */
    private record Level(int concurrency, double tgTps, double ttftMs, double wallTps, ClusterStats wire, double[] utilisation) {
        Level(int concurrency, double tgTps, double ttftMs, double wallTps) {
            this(concurrency, tgTps, ttftMs, wallTps, null, null);
        }

        /** What the level's requests cost on the wire, and each node's share of the level's time spent computing. */
        Level withWire(ClusterStats w, double[] u) {
            return new Level(concurrency, tgTps, ttftMs, wallTps, w, u);
        }

        String utilisationText() {
            StringBuilder b = new StringBuilder();
            for (double x : utilisation) {
                b.append(b.isEmpty() ? "" : " / ").append(String.format(Locale.ROOT, "%.0f%%", 100 * x));
            }
            return b.toString();
        }
    }

    private int concurrent(Path path, KvType kv, int t, int p, int n) throws IOException, InterruptedException {
        return concurrent(path, kv, t, p, n, null);
    }

    /** {@code cluster} null: in process; else through it, with its wire counters per level. */
    private int concurrent(Path path, KvType kv, int t, int p, int n, BenchCluster cluster) throws IOException, InterruptedException {
        checkCounts(p, n);
        int max = 1;
        for (int c : concurrency) {
            if (c < 1) {
                throw new CliException("--concurrency values must be at least 1, got " + c);
            }
            max = Math.max(max, c);
        }
        EngineConfig config = new EngineConfig(path, t, p + n, kv, 0, max, Math.max(512, max), max);
        PrintWriter out = spec.commandLine().getOut();
        List<Level> levels = new ArrayList<>();
        BackendInfo ran;
        try (InferenceEngine engine = cluster == null ? EngineAssembly.open(config, ml.juno.coordinator.engine.EngineLora.play(lora.specs()))
                : cluster.open(config)) {
            ran = engine.backend();
            if (p + n > engine.info().contextLength()) {
                throw new CliException("-p + -n of " + (p + n) + " exceed the model's context of " + engine.info().contextLength());
            }
            SplittableRandom random = new SplittableRandom(42);
            // warm-up, untimed: one sequence alone runs the single-row kernels, several run the batched ones; without
            // the first, level 1 would time the JIT compiling them
            run(engine, random, 1, p, Math.min(n, 8));
            run(engine, random, max, p, Math.min(n, 4));
            if (cluster != null) {
                // the nodes' step path runs a few times a second and compiles late: levels at the highest concurrency,
                // untimed, until --warm-up tokens have been generated
                for (long warm = 0; warm < warmUpTokens; warm += (long) max * n) {
                    run(engine, random, max, p, n);
                }
            }
            for (int c : concurrency) {
                ClusterStats before = cluster == null ? null : cluster.stats();
                long[] busy = cluster == null ? null : cluster.computeNanos();
                long t0 = System.nanoTime();
                Level l = run(engine, random, c, p, n);
                long wall = System.nanoTime() - t0;
                levels.add(cluster == null ? l : l.withWire(cluster.stats().minus(before),
                        BenchCluster.utilisation(busy, cluster.computeNanos(), wall)));
            }
        }
        if (json) {
            ObjectMapper mapper = new ObjectMapper();
            ObjectNode o = mapper.createObjectNode();
            o.put("threads", t);
            o.put("pp_tokens", p);
            o.put("tg_tokens", n);
            o.put("backend", ran.kind());
            o.put("isa", ran.isa());
            if (cluster != null) {
                cluster.json(o);
            }
            ArrayNode runs = o.putArray("runs");
            for (Level l : levels) {
                ObjectNode r = runs.addObject().put("concurrency", l.concurrency()).put("tg_tps", l.tgTps()).put("ttft_ms", l.ttftMs())
                        .put("e2e_tps", l.wallTps());
                if (l.wire() != null) {
                    BenchCluster.wireJson(r.putObject("wire"), l.wire());
                    ArrayNode u = r.putArray("stage_utilisation"); // each node's compute time / the level's wall time
                    for (double x : l.utilisation()) {
                        u.add(x);
                    }
                }
            }
            out.println(mapper.writeValueAsString(o));
        } else {
            out.println(String.format(Locale.ROOT, "concurrent requests of %d prompt + %d generated tokens, %d threads%s", p, n, t,
                    cluster == null ? "" : " per node"));
            if (cluster != null) {
                out.println(cluster.describe());
            }
            out.println("| concurrency | gen tok/s (aggregate) | TTFT ms (mean) | end-to-end tok/s |"
                    + (cluster == null ? "" : " wire B/token | ms/hop | node utilisation | steps overlapped |"));
            out.println("| ---: | ---: | ---: | ---: |" + (cluster == null ? "" : " ---: | ---: | ---: | ---: |"));
            for (Level l : levels) {
                String wire = l.wire() == null ? "" : String.format(Locale.ROOT, " %.0f | %.3f | %s | %d |", BenchCluster.bytesPerToken(l.wire()),
                        BenchCluster.millisPerHop(l.wire()), l.utilisationText(), l.wire().overlapped());
                out.println(String.format(Locale.ROOT, "| %d | %.2f | %.1f | %.2f |", l.concurrency(), l.tgTps(), l.ttftMs(), l.wallTps()) + wire);
            }
            out.println("backend: " + ran);
        }
        out.flush();
        return 0;
    }

    /**
     * {@code c} requests of random {@code p}-token prompts (never a prefix-cache hit) at once, {@code n} greedy tokens
     * each with EOS ignored. Generation speed counts the tokens after each request's first one, over the time from the
     * last first token to the last finish (all requests decoding together, llama-batched-bench's S_TG idea).
     */
    private static Level run(InferenceEngine engine, SplittableRandom random, int c, int p, int n) throws InterruptedException {
        int vocab = engine.info().vocabSize();
        CountDownLatch done = new CountDownLatch(c);
        Timed[] timed = new Timed[c];
        long start = System.nanoTime();
        for (int i = 0; i < c; i++) {
            int[] tokens = new int[p];
            for (int j = 0; j < p; j++) {
                tokens[j] = 3 + random.nextInt(vocab - 3);
            }
            timed[i] = new Timed(done, n);
            SubmitResult r = engine.submit(new GenerationRequest(tokens, SamplingParams.greedy(), StopCondition.of(n), 0, -1), timed[i]);
            if (r instanceof SubmitResult.Rejected rej) {
                throw new CliException("request rejected: " + rej.reason());
            }
        }
        if (!done.await(30, TimeUnit.MINUTES)) {
            throw new CliException("benchmark did not finish in 30 minutes");
        }
        long lastFirst = 0;
        long end = 0;
        double ttft = 0;
        for (Timed x : timed) { // the latch's countDown/await orders these reads after the output threads' writes
            if (x.reason != FinishReason.LENGTH || x.tokens != n) {
                throw new CliException("benchmark request ended with " + x.reason.wireName() + " after " + x.tokens + " tokens " + x.message);
            }
            lastFirst = Math.max(lastFirst, x.times[0]);
            end = Math.max(end, x.times[n - 1]);
            ttft += (x.times[0] - x.submitted) / 1e6;
        }
        long later = 0; // tokens produced while every request was decoding
        for (Timed x : timed) {
            for (int k = 0; k < n; k++) {
                later += x.times[k] > lastFirst ? 1 : 0;
            }
        }
        double tg = end > lastFirst && later > 0 ? later / ((end - lastFirst) / 1e9) : 0;
        return new Level(c, tg, ttft / c, (double) c * n / ((end - start) / 1e9));
    }
}
