package ml.juno.engine.model;

import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.model.block.AllReduce;

/**
 * One model architecture ({@code general.architecture} value): how to read its config and tensors from a GGUF file and
 * run it. Implementations are assembled from the shared blocks in {@code model.block}.
 */
public interface Architecture {

    /** The {@code general.architecture} values this class serves. */
    java.util.List<String> names();

    /** Reads the config from metadata (and tensor shapes where metadata is silent). */
    ModelConfig config(GgufFile file);

    /**
     * Checks and maps the tensors of {@code shard}; fails with a clear message before any compute. A tensor-parallel
     * shard ({@code shard.tensorParts() > 1}) holds its rank's slice and combines partial sums through
     * {@code allReduce} (ignored for a whole-width shard).
     */
    DecoderModel load(GgufFile file, ModelConfig config, ShardSpec shard, AllReduce allReduce);

    /**
     * {@link #load(GgufFile, ModelConfig, ShardSpec, AllReduce)} for sequences of up to {@code contextLength} positions,
     * for architectures whose weights depend on it (phi3's LongRoPE picks its long factors beyond the original context).
     */
    default DecoderModel load(GgufFile file, ModelConfig config, ShardSpec shard, AllReduce allReduce, int contextLength) {
        return load(file, config, shard, allReduce);
    }
}
