package ml.juno.engine.model;

import ml.juno.engine.gguf.GgufFile;

/**
 * One model architecture ({@code general.architecture} value): how to read its config and tensors from a GGUF file and
 * run it. Implementations are assembled from the shared blocks in {@code model.block}.
 */
public interface Architecture {

    /** The {@code general.architecture} values this class serves. */
    java.util.List<String> names();

    /** Reads the config from metadata (and tensor shapes where metadata is silent). */
    ModelConfig config(GgufFile file);

    /** Checks and maps the tensors of {@code shard}; fails with a clear message before any compute. */
    DecoderModel load(GgufFile file, ModelConfig config, ShardSpec shard);
}
