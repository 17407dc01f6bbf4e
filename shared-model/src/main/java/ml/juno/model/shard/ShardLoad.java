package ml.juno.model.shard;

import java.nio.ByteOrder;
import ml.juno.engine.kv.KvType;
import ml.juno.model.wire.ActivationDtype;

/**
 * What a node is asked to load (the wire's {@code LoadShardRequest}, through {@code ProtoMapping}): a model file, which
 * part of it, how its activations travel, and the sizes of its session. The node checks the sizes and the partition
 * against the model when it loads.
 *
 * @param modelPath      the GGUF file
 * @param partition      a pipeline layer range, a tensor slice, or the whole model
 * @param dtype          activations and partial sums this node sends
 * @param order          their byte order
 * @param contextLength  positions per sequence (0: the engine's default)
 * @param maxSequences   sequence slots
 * @param maxBatchTokens rows in one step at most
 * @param kvBlockSize    tokens per KV block (the coordinator's block size)
 * @param kvBlocks       blocks in the KV pool (block ids 0 .. kvBlocks-1)
 * @param kvType         KV element type
 * @param threads        compute threads; 0 = all cores
 * @param loraPlay       adapters played on every row ({@code --lora-play}), summed; this node applies its part
 * @param loraModules    the named adapters' files ({@code --lora-modules}), adapter id {@code i + 1} for entry {@code i}
 */
public record ShardLoad(String modelPath, Partition partition, ActivationDtype dtype, ByteOrder order, int contextLength,
                        int maxSequences, int maxBatchTokens, int kvBlockSize, int kvBlocks, KvType kvType, int threads,
                        java.util.List<Lora> loraPlay, java.util.List<String> loraModules) {

    public ShardLoad {
        loraPlay = loraPlay == null ? java.util.List.of() : java.util.List.copyOf(loraPlay);
        loraModules = loraModules == null ? java.util.List.of() : java.util.List.copyOf(loraModules);
    }

    /** An adapter file and the scale it is played at. */
    public record Lora(String path, float scale) {
    }

    /** Which part of the model: known before the file is opened, resolved against its layer count after. */
    public sealed interface Partition {
        ShardAssignment assignment(int modelLayers);
    }

    /**
     * Layers {@code [firstLayer, endLayer)}, as stage {@code stage} of a pipeline whose stages are at {@code stages}
     * (host:port each, in order): with them, the stage sends its output rows to the next stage itself and takes its
     * input rows from the previous one; without (empty), its rows go back to the coordinator.
     *
     * @param group               the coordinator's id of this pipeline: rows that name another group are refused
     * @param forwardTimeoutMillis how long the stage waits for its previous stage's rows at most (0: the node's own setting)
     */
    public record Pipeline(int firstLayer, int endLayer, java.util.List<String> stages, int stage, long group,
                           long forwardTimeoutMillis) implements Partition {
        public Pipeline {
            stages = stages == null ? java.util.List.of() : java.util.List.copyOf(stages);
            if (!stages.isEmpty() && (stage < 0 || stage >= stages.size())) {
                throw new IllegalArgumentException("pipeline stage " + stage + " of " + stages.size() + " stages");
            }
        }

        /** A stage that answers its rows to the coordinator. */
        public Pipeline(int firstLayer, int endLayer) {
            this(firstLayer, endLayer, java.util.List.of(), 0, 0, 0);
        }

        /** True when this stage exchanges rows with its neighbours itself. */
        public boolean nodeToNode() {
            return stages.size() > 1;
        }

        @Override
        public ShardAssignment assignment(int modelLayers) {
            return new ShardAssignment(new LayerRange(firstLayer, endLayer), 0, 1);
        }
    }

    /**
     * Slice {@code rank} of {@code worldSize} of every layer, reduced with the other ranks of {@code group} directly.
     *
     * @param peers {@code host:port} of every rank in rank order ({@code peers.get(rank)} is this node), or empty for
     *              a world of one
     * @param group the coordinator's id of this group of ranks: partials that name another group are refused
     * @param reduceTimeoutMillis how long an all-reduce waits for a peer's partial at most (0: the node's own setting);
     *              the coordinator sets it below its step deadline, so a rank names the peer it waited for in time
     */
    public record Tensor(int rank, int worldSize, java.util.List<String> peers, long group, long reduceTimeoutMillis) implements Partition {
        public Tensor {
            peers = peers == null ? java.util.List.of() : java.util.List.copyOf(peers);
        }

        /** Why this slice cannot reduce with its peers (their addresses do not match the world size), or null. */
        public String peersProblem() {
            if (worldSize > 1 && peers.size() != worldSize) {
                return "tensor rank " + rank + " of " + worldSize + " needs the addresses of all " + worldSize
                        + " ranks (peers), got " + peers.size();
            }
            return null;
        }

        @Override
        public ShardAssignment assignment(int modelLayers) {
            return new ShardAssignment(new LayerRange(0, modelLayers), rank, worldSize);
        }
    }

    /** Every layer, unsplit. */
    public record Whole() implements Partition {
        @Override
        public ShardAssignment assignment(int modelLayers) {
            return new ShardAssignment(new LayerRange(0, modelLayers), 0, 1);
        }
    }
}
