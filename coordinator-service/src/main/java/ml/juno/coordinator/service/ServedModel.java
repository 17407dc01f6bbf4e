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
public record ServedModel(InferenceEngine engine, String id, String fingerprint, long created, int maxPieceBytes) {

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
