package ml.juno.coordinator.service;

import ml.juno.coordinator.engine.InferenceEngine;

/**
 * The loaded model as the API presents it.
 *
 * @param engine      the running engine
 * @param id          the model id clients name in {@code model}
 * @param fingerprint {@code system_fingerprint}: changes when the model file or the Juno version changes
 * @param created     the model file's modification time, epoch seconds
 * @param maxPieceBytes bytes of the vocabulary's longest token: a text longer than {@code context × maxPieceBytes}
 *                      characters cannot fit the context, which is known without tokenizing it
 */
public record ServedModel(InferenceEngine engine, String id, String fingerprint, long created, int maxPieceBytes, int adapter) {

    /** The base model (no named adapter). */
    public ServedModel(InferenceEngine engine, String id, String fingerprint, long created, int maxPieceBytes) {
        this(engine, id, fingerprint, created, maxPieceBytes, 0);
    }

    /** The named LoRA adapter {@code name} of this engine as a model of its own, or {@code null} when there is none. */
    public ServedModel adapter(String name) {
        int a = engine.lora().idOf(name);
        return a == 0 ? null : new ServedModel(engine, name, fingerprint, created, maxPieceBytes, a);
    }

    /** This model and each named adapter, base first. */
    public java.util.List<ServedModel> withAdapters() {
        java.util.List<ServedModel> out = new java.util.ArrayList<>();
        out.add(this);
        for (var m : engine.lora().modules()) {
            out.add(adapter(m.name()));
        }
        return out;
    }

    /** The base model's id for a named adapter, {@code null} for the base. */
    public String parent() {
        return adapter == 0 ? null : engine.modelId();
    }

    /** Longest token of the engine's vocabulary, in bytes (at least 1). */
    static int maxPieceBytes(InferenceEngine engine) {
        var tok = engine.tokenizer();
        int max = 1;
        for (int id = 0; id < tok.size(); id++) {
            max = Math.max(max, tok.pieceBytes(id, true).length);
        }
        return max;
    }
}
