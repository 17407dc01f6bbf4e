package ml.juno.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import ml.juno.coordinator.engine.EngineAssembly;
import ml.juno.coordinator.engine.EngineConfig;
import ml.juno.coordinator.engine.GenerationListener;
import ml.juno.coordinator.engine.InferenceEngine;
import ml.juno.coordinator.engine.LogitsObserver;
import ml.juno.coordinator.sampling.FinishReason;
import ml.juno.coordinator.sampling.LogitBias;
import ml.juno.coordinator.sampling.RepetitionPenalties;
import ml.juno.coordinator.sampling.SamplingParams;
import ml.juno.coordinator.sampling.StopCondition;
import ml.juno.coordinator.sampling.TokenLogprobs;
import ml.juno.coordinator.sampling.Truncation;
import ml.juno.coordinator.scheduler.GenerationRequest;
import ml.juno.coordinator.scheduler.SubmitResult;
import ml.juno.coordinator.scheduler.Usage;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code juno generate}: one prompt through the in-process engine (scheduler and generation loop included). */
@Command(name = "generate", mixinStandardHelpOptions = true,
        description = {"Generate text from a prompt with the in-process engine. Streams the text; --json prints one object instead.",
                "Temperature 0 is greedy (argmax, ties to the lowest id)."})
final class GenerateCommand implements Callable<Integer> {

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

    @Option(names = {"--prompt", "-p"}, required = true, paramLabel = "TEXT", description = "The prompt (BOS added when the model asks for it).")
    String prompt;

    @Option(names = {"--max-tokens", "-n"}, defaultValue = "128", description = "Tokens to generate at most (default: ${DEFAULT-VALUE}); stops earlier at the end of the context.")
    int maxTokens;

    @Option(names = "--temperature", defaultValue = "0.8", description = "Sampling temperature; 0 = greedy (default: ${DEFAULT-VALUE}).")
    float temperature;

    @Option(names = "--top-k", defaultValue = "40", description = "Keep the K most likely tokens; 0 = off (default: ${DEFAULT-VALUE}).")
    int topK;

    @Option(names = "--top-p", defaultValue = "0.95", description = "Nucleus sampling threshold; 1 = off (default: ${DEFAULT-VALUE}).")
    float topP;

    @Option(names = "--min-p", defaultValue = "0.05", description = "Drop tokens below this fraction of the best one's probability; 0 = off (default: ${DEFAULT-VALUE}).")
    float minP;

    @Option(names = "--seed", defaultValue = "-1", description = "Sampling seed; -1 = a random one (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--ignore-eos", description = "Keep generating past end-of-generation tokens.")
    boolean ignoreEos;

    @Option(names = "--top-logits", defaultValue = "0", paramLabel = "K", description = "With --json: the K largest raw logits of every generated token's distribution.")
    int topLogits;

    @Option(names = {"--threads", "-t"}, defaultValue = "0", description = "Compute threads (default: all cores).")
    int threads;

    @Option(names = "--cache-type", defaultValue = "f32", paramLabel = "f32|f16", description = "KV cache element type (default: ${DEFAULT-VALUE}, as llama.cpp's reference outputs).")
    String cacheType;

    @Option(names = "--json", description = "Print {\"prompt_tokens\",\"tokens\",\"text\",\"top_logits\",\"timings\"} instead of streaming text.")
    boolean json;

    @Override
    public Integer call() throws IOException, InterruptedException {
        if (maxTokens < 1) {
            throw new CliException("--max-tokens must be at least 1, got " + maxTokens);
        }
        if (topLogits < 0) {
            throw new CliException("--top-logits must be >= 0, got " + topLogits);
        }
        SamplingParams sampling = sampling();
        backend.applyToThisJvm();
        expertCache.applyToThisJvm();
        EngineConfig config = new EngineConfig(model.resolve(), threads, 0, CacheTypes.parse(cacheType), 0, 1, 512, 1);
        PrintWriter out = spec.commandLine().getOut();
        try (InferenceEngine engine = EngineAssembly.open(config, ml.juno.coordinator.engine.EngineLora.play(lora.specs()))) {
            int[] promptTokens = engine.tokenizer().encode(prompt);
            int context = engine.info().contextLength();
            if (promptTokens.length >= context) {
                throw new CliException("prompt of " + promptTokens.length + " tokens does not fit the context of "
                        + context + " tokens");
            }
            int n = Math.min(maxTokens, context - promptTokens.length);
            int[] stops = ignoreEos ? new int[0] : engine.tokenizer().endOfGenerationIds();
            TopLogits tops = json && topLogits > 0 ? new TopLogits(n, Math.min(topLogits, engine.info().vocabSize())) : null;
            engine.observeLogits(tops);
            Output sink = new Output(n, json ? null : out);
            long t0 = System.nanoTime();
            SubmitResult r = engine.submit(new GenerationRequest(promptTokens, sampling, StopCondition.of(n, stops), 0, -1), sink);
            if (r instanceof SubmitResult.Rejected rejected) {
                throw new CliException("request rejected: " + rejected.reason());
            }
            sink.done.await();
            long t2 = System.nanoTime();
            if (sink.reason == FinishReason.ERROR) {
                throw new CliException("generation failed: " + sink.message);
            }
            long t1 = sink.count > 0 ? sink.firstTokenNanos : t2;
            if (json) {
                out.println(json(promptTokens, sink, tops, t1 - t0, t2 - t1));
            } else {
                out.println();
                PrintWriter err = spec.commandLine().getErr();
                err.println(String.format(Locale.ROOT, "juno: prompt %d tokens in %.1f ms; generated %d tokens in %.1f ms (%.2f tok/s), %s",
                        promptTokens.length, (t1 - t0) / 1e6, sink.count, (t2 - t1) / 1e6,
                        sink.count > 1 ? (sink.count - 1) / ((t2 - t1) / 1e9) : 0.0, sink.reason.wireName()));
            }
            out.flush();
            return 0;
        }
    }

    private SamplingParams sampling() {
        try {
            if (temperature == 0f) {
                return SamplingParams.greedy();
            }
            long s = seed == -1 ? System.nanoTime() : seed;
            return new SamplingParams(temperature, new Truncation(topK, topP, minP), RepetitionPenalties.NONE, LogitBias.NONE, s);
        } catch (IllegalArgumentException e) {
            throw new CliException(e.getMessage());
        }
    }

    private static String json(int[] promptTokens, Output sink, TopLogits tops, long promptNanos, long genNanos) throws IOException {
        ObjectMapper mapper = new ObjectMapper();
        ObjectNode root = mapper.createObjectNode();
        ArrayNode p = root.putArray("prompt_tokens");
        for (int id : promptTokens) {
            p.add(id);
        }
        ArrayNode t = root.putArray("tokens");
        for (int i = 0; i < sink.count; i++) {
            t.add(sink.tokens[i]);
        }
        root.put("text", sink.text.toString());
        ArrayNode tl = root.putArray("top_logits");
        if (tops != null) {
            for (int i = 0; i < Math.min(sink.count, tops.rows); i++) {
                ArrayNode step = tl.addArray();
                for (int j = 0; j < tops.k; j++) {
                    step.addArray().add(tops.ids[i][j]).add(tops.logits[i][j]);
                }
            }
        }
        ObjectNode timings = root.putObject("timings");
        timings.put("prompt_ms", promptNanos / 1e6);
        timings.put("gen_ms", genNanos / 1e6);
        return mapper.writeValueAsString(root);
    }

    /** The request's tokens and text; streams text to {@code out} when given. Runs on the request's output thread. */
    private static final class Output implements GenerationListener {
        final int[] tokens;
        final StringBuilder text = new StringBuilder();
        final CountDownLatch done = new CountDownLatch(1);
        final PrintWriter out;
        int count;
        long firstTokenNanos;
        volatile FinishReason reason;
        volatile String message;

        Output(int maxTokens, PrintWriter out) {
            this.tokens = new int[maxTokens];
            this.out = out;
        }

        @Override
        public void onToken(int choice, int tokenId, String piece, TokenLogprobs logprobs) {
            if (count == 0) {
                firstTokenNanos = System.nanoTime();
            }
            tokens[count++] = tokenId;
            onText(choice, piece);
        }

        @Override
        public void onText(int choice, String piece) {
            text.append(piece);
            if (out != null && !piece.isEmpty()) {
                out.print(piece);
                out.flush();
            }
        }

        @Override
        public void onChoiceFinished(int choice, FinishReason r, Usage usage, String m) {
            reason = r;
            message = m;
            done.countDown();
        }
    }

    /** Top-K raw logits of each observed row, into arrays sized up front (nothing allocated per token). */
    private static final class TopLogits implements LogitsObserver {
        final int rows;
        final int k;
        final int[][] ids;
        final float[][] logits;
        int count;

        TopLogits(int rows, int k) {
            this.rows = rows;
            this.k = k;
            this.ids = new int[rows][k];
            this.logits = new float[rows][k];
        }

        @Override
        public void onLogits(long sequenceId, float[] values, int offset, int vocab) {
            if (count == rows) {
                return;
            }
            int[] id = ids[count];
            float[] v = logits[count];
            int n = 0;
            for (int t = 0; t < vocab; t++) { // insertion into a sorted top-K: largest first, ties to the lower id
                float x = values[offset + t];
                if (n == k && !(x > v[k - 1])) {
                    continue;
                }
                int j = n < k ? n++ : k - 1;
                while (j > 0 && v[j - 1] < x) {
                    id[j] = id[j - 1];
                    v[j] = v[j - 1];
                    j--;
                }
                id[j] = t;
                v[j] = x;
            }
            count++;
        }
    }
}
