package ml.juno.coordinator.service;

import io.quarkus.runtime.LaunchMode;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.Optional;
import ml.juno.coordinator.cluster.ClusterExecutor;
import ml.juno.coordinator.cluster.ClusterSettings;
import ml.juno.coordinator.engine.EngineAssembly;
import ml.juno.coordinator.engine.EngineConfig;
import ml.juno.coordinator.engine.InferenceEngine;
import ml.juno.engine.EngineInfo;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * Creates the one {@link InferenceEngine} of this process from {@link JunoConfig} and owns its lifecycle.
 * The model loads on a background thread at startup, so the HTTP server is live at once and becomes ready
 * when the model is loaded; until then {@link #require()} answers {@link EngineNotReadyException} (HTTP 503).
 */
@ApplicationScoped
public class EngineProducer {

    private static final Logger LOG = Logger.getLogger(EngineProducer.class);

    private final JunoConfig config;
    private final ClusterSettings cluster;
    private volatile ServedModel served;
    private volatile String state = "starting";

    private final boolean exitOnLoadFailure;

    private final ml.juno.coordinator.cluster.NodeRegistry registry;

    EngineProducer(JunoConfig config, ClusterSettings cluster, ml.juno.coordinator.cluster.NodeRegistry registry,
                   @ConfigProperty(name = "juno.exit-on-load-failure", defaultValue = "true") boolean exitOnLoadFailure) {
        this.config = config;
        this.cluster = cluster;
        this.registry = registry;
        this.exitOnLoadFailure = exitOnLoadFailure;
    }

    void onStart(@Observes StartupEvent ignored) {
        Optional<Path> path = config.modelPath();
        if (path.isEmpty()) {
            state = "no model configured: set juno.model-path (juno local --model-path FILE)";
            LOG.warn(state);
            return;
        }
        state = "loading " + path.get();
        Thread.ofPlatform().name("juno-model-load").daemon().start(() -> load(path.get()));
    }

    void onStop(@Observes ShutdownEvent ignored) {
        ServedModel s = served;
        served = null;
        state = "shutting down";
        if (s != null) {
            s.engine().close();
        }
    }

    private void load(Path path) {
        long t0 = System.nanoTime();
        try {
            EngineConfig ec = engineConfig(path);
            java.util.List<ml.juno.engine.lora.LoraAdapters.Spec> play = config.loraPlay().orElse(java.util.List.of()).stream()
                    .map(ml.juno.engine.lora.LoraAdapters.Spec::parse).toList();
            java.util.List<ml.juno.engine.lora.LoraAdapters.Module> modules = ml.juno.engine.lora.LoraAdapters.Module.parseList(
                    String.join(",", config.loraModules().orElse(java.util.List.of())));
            ml.juno.coordinator.engine.EngineLora lora = new ml.juno.coordinator.engine.EngineLora(play, modules);
            InferenceEngine engine = cluster.nodes().isPresent()
                    ? EngineAssembly.open(ec, ClusterExecutor.factory(cluster.toConfig(), ec, lora), lora) // compute on the nodes
                    : NodeRegistryProducer.registryMode(cluster) // on the nodes that join (juno node --join)
                    ? EngineAssembly.open(ec, ml.juno.coordinator.cluster.RegistryExecutor.factory(registry, cluster.minNodes().get(),
                            ml.juno.coordinator.cluster.Parallelism.parse(cluster.parallelism()), cluster::toConfig, ec, lora), lora)
                    : EngineAssembly.open(ec, lora);
            served = new ServedModel(engine, engine.modelId(), fingerprint(path), Files.getLastModifiedTime(path).toMillis() / 1000,
                    ServedModel.maxPieceBytes(engine));
            state = "ready";
            LOG.infof("model %s loaded in %d ms (%s); backend %s", engine.modelId(), (System.nanoTime() - t0) / 1_000_000,
                    engine.info(), engine.backend());
        } catch (IOException | RuntimeException e) {
            state = "model failed to load: " + e.getMessage();
            if (exitOnLoadFailure && LaunchMode.current() == LaunchMode.NORMAL) {
                // an impossible configuration (a split that cannot work, a model a node cannot open, nodes that never came
                // up) does not get better by waiting: say why and exit non-zero, so the launcher or supervisor sees it
                LOG.error("FATAL: " + state + "; exiting");
                Quarkus.asyncExit(1);
                return;
            }
            LOG.error(state, e);
        }
    }

    private EngineConfig engineConfig(Path path) {
        EngineConfig d = EngineConfig.defaults(path);
        return new EngineConfig(path,
                config.threads() > 0 ? config.threads() : d.threads(),
                config.contextLength() > 0 ? config.contextLength() : d.contextLength(),
                config.kvType().orElse(d.kvType()),
                config.kvBudgetBytes().orElse(d.kvBudgetBytes()),
                config.maxSequences().orElse(d.maxSequences()),
                config.maxBatchTokens().orElse(d.maxBatchTokens()),
                config.maxQueue().orElse(d.maxQueue()));
    }

    /** Changes with the model file (name, size, time) and the Juno version, like OpenAI's backend fingerprint. */
    private static String fingerprint(Path path) throws IOException {
        String key = path.getFileName() + "|" + Files.size(path) + "|" + Files.getLastModifiedTime(path).toMillis() + "|" + EngineInfo.VERSION;
        long h = 1125899906842597L;
        for (int i = 0; i < key.length(); i++) {
            h = 31 * h + key.charAt(i);
        }
        return "fp_" + HexFormat.of().toHexDigits(h).substring(6);
    }

    /**
     * Unloads the served model if {@code id} names it ({@code DELETE /v1/models/{id}}): requests in flight end with an
     * error, new ones get 503 until the server is restarted. False when {@code id} is not the loaded model.
     */
    public boolean unload(String id) {
        ServedModel s;
        synchronized (this) {
            s = served;
            if (s == null || !s.id().equals(id)) {
                return false;
            }
            served = null;
            state = "unloaded (DELETE /v1/models/" + id + "); restart the server to serve a model again";
        }
        LOG.infof("model %s unloaded on request", id);
        s.engine().close();
        return true;
    }

    /** The loaded model, ready or not (a cluster with a node down is loaded but not ready). */
    public Optional<ServedModel> loaded() {
        return Optional.ofNullable(served);
    }

    /** The served model, if it is loaded and the engine is ready. */
    public Optional<ServedModel> current() {
        ServedModel s = served;
        return s != null && s.engine().ready() ? Optional.of(s) : Optional.empty();
    }

    /** The served model, or {@link EngineNotReadyException} saying why there is none. */
    public ServedModel require() {
        return current().orElseThrow(() -> new EngineNotReadyException("The model is not ready: " + state()));
    }

    /** "ready", "loading …", "model failed to load: …", "shutting down", … */
    public String state() {
        ServedModel s = served;
        return s != null && !s.engine().ready() ? s.engine().notReadyReason() : state;
    }
}
