package ml.juno.node.runtime;

import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.kernel.Backends;
import ml.juno.engine.model.EngineOptions;
import ml.juno.engine.model.Model;
import ml.juno.engine.model.ShardSpec;
import ml.juno.engine.model.block.AllReduce;

/** Loads a shard with the all-reduce hook its tensor slices sum through (pipeline stages never call it). */
final class TensorParallel {
    private TensorParallel() {}

    static Model load(GgufFile file, EngineOptions options, ShardSpec spec, AllReduce allReduce) {
        return Model.load(file, options, spec, Backends::select, spec.tensorParts() > 1 ? allReduce : null);
    }
}
