package ml.juno.engine.model;

import ml.juno.engine.gguf.TensorNames;
import ml.juno.engine.kernel.AttentionShape;
import ml.juno.engine.kernel.Backend;
import ml.juno.engine.kernel.WeightMatrix;
import ml.juno.engine.kv.KvCache;
import ml.juno.engine.model.block.AllReduce;
import ml.juno.engine.model.block.DecoderLayer;
import ml.juno.engine.model.block.ForwardState;
import ml.juno.engine.model.block.GatedFfn;
import ml.juno.engine.model.block.LayerLora;
import ml.juno.engine.model.block.MoeFfn;
import ml.juno.engine.model.block.RmsNorm;
import ml.juno.engine.model.block.Rope;

/**
 * A decoder-only transformer (or a shard of one) as the architectures assemble it: token embedding (optionally
 * scaled), a stack of {@link DecoderLayer}s, final norm and output projection (optionally soft-capped). What differs
 * between architectures lives in the layers' blocks; this class only runs them in order.
 */
public final class TransformerDecoder implements DecoderModel {
    private final ModelConfig config;
    private final ShardSpec shard;
    private final AttentionShape localShape;
    private final AllReduce allReduce;
    private final Input input;
    private final DecoderLayer[] layers;
    private final Head head;
    private final ForwardState.BufferSizes sizes;
    private final ForwardState.Routing routing;
    private LayerLora[] lora;

    /** The first shard's input: embedding table ({@code null} on other shards) and the factor its rows are scaled by. */
    public record Input(WeightMatrix embeddings, float scale) {}

    /**
     * The last shard's output: final norm, output matrix ({@code null}s on other shards) and the final logit soft cap
     * ({@code logits = cap·tanh(logits/cap)}; 0 = none). A tensor-parallel rank's {@code output} holds only the
     * vocabulary rows {@code [vocabFrom, vocabFrom + output.rows())} ({@link ShardTensors#vocabRange}); the others'
     * logits come from its peers ({@link AllReduce#gatherColumns}).
     */
    public record Head(RmsNorm norm, WeightMatrix output, float softcap, int vocabFrom) {
        public static final Head NONE = new Head(null, null, 0f, 0);

        public Head(RmsNorm norm, WeightMatrix output, float softcap) {
            this(norm, output, softcap, 0);
        }
    }

    public TransformerDecoder(ShardTensors t, Input input, DecoderLayer[] layers, Head head) {
        this.config = t.config();
        this.shard = t.shard();
        this.localShape = t.localShape();
        this.allReduce = t.allReduce();
        this.input = input;
        this.layers = layers.clone();
        this.head = head;
        if (layers.length != shard.layerCount()) {
            throw new IllegalArgumentException(layers.length + " layers for a shard of " + shard.layerCount());
        }
        int ffn = 0;
        int rope = 0;
        ForwardState.Routing r = ForwardState.Routing.NONE;
        for (DecoderLayer l : layers) {
            rope = Math.max(rope, l.attention().rope().dims() / 2);
            if (l.ffn() instanceof GatedFfn g) {
                ffn = Math.max(ffn, g.width());
            } else if (l.ffn() instanceof MoeFfn m) {
                ffn = Math.max(ffn, m.width());
                ForwardState.Routing mr = m.routing();
                r = new ForwardState.Routing(Math.max(r.experts(), mr.experts()), Math.max(r.used(), mr.used()));
            }
        }
        this.sizes = new ForwardState.BufferSizes(config.dims().embedding(), localShape.qDim(), localShape.kvDim(), ffn, rope);
        this.routing = r;
        this.lora = new LayerLora[layers.length];
    }

    @Override
    public void setLora(LayerLora[] perLayer) {
        LayerLora[] next = new LayerLora[layers.length];
        if (perLayer.length != 0 && perLayer.length != layers.length) {
            throw new IllegalArgumentException(perLayer.length + " LoRA layers for a shard of " + layers.length);
        }
        for (int i = 0; i < perLayer.length; i++) {
            if (perLayer[i] != null) {
                layers[i].checkLora(perLayer[i], "layer " + (shard.firstLayer() + i));
                next[i] = perLayer[i];
            }
        }
        this.lora = next;
    }

    @Override
    public java.util.List<MoeFfn> moeLayers() {
        java.util.List<MoeFfn> out = new java.util.ArrayList<>();
        for (DecoderLayer l : layers) {
            if (l.ffn() instanceof MoeFfn m) {
                out.add(m);
            }
        }
        return out;
    }

    @Override
    public int[] moeLayerIndices() {
        return java.util.stream.IntStream.range(0, layers.length).filter(i -> layers[i].ffn() instanceof MoeFfn)
                .map(i -> shard.firstLayer() + i).toArray();
    }

    /** The standard head of the last shard: {@code output_norm}, {@code output} (tied to the embeddings when absent). */
    public static Head standardHead(ShardTensors t, float softcap) {
        var d = t.config().dims();
        if (!t.shard().isLast(d.layers())) {
            return Head.NONE;
        }
        ModelTensors m = t.tensors();
        RmsNorm norm = new RmsNorm(m.vector(TensorNames.global(TensorNames.OUTPUT_NORM), d.embedding()), t.config().normEps());
        WeightMatrix output = m.optionalMatrix(TensorNames.global(TensorNames.OUTPUT), d.embedding(), d.vocab())
                .orElseGet(() -> m.matrix(TensorNames.global(TensorNames.TOKEN_EMBD), d.embedding(), d.vocab()));
        if (t.shard().tensorParts() == 1) {
            return new Head(norm, output, softcap);
        }
        int[] rows = ShardTensors.vocabRange(d.vocab(), t.shard());
        return new Head(norm, output.rowSlice(rows[0], rows[1]), softcap, rows[0]);
    }

    /** The standard input of the first shard: {@code token_embd}, rows scaled by {@code scale}. */
    public static Input standardInput(ShardTensors t, float scale) {
        var d = t.config().dims();
        WeightMatrix embd = t.tensors().matrix(TensorNames.global(TensorNames.TOKEN_EMBD), d.embedding(), d.vocab());
        return new Input(t.shard().embeds() ? embd : null, scale);
    }

    /** The rope of the model: base and scale of the config, {@code rope_freqs} factors when present. */
    public static Rope standardRope(ShardTensors t) {
        RopeConfig r = t.config().rope();
        ModelTensors m = t.tensors();
        float[] factors = m.has(TensorNames.global(TensorNames.ROPE_FREQS)) ? m.vector(TensorNames.global(TensorNames.ROPE_FREQS), r.dims() / 2) : null;
        return new Rope(r.dims(), r.freqBase(), r.freqScale(), factors, r.neox());
    }

    /** The first shard's input (embedding table and scale). */
    public Input input() {
        return input;
    }

    /** The layers of this shard, in order. */
    public DecoderLayer[] layers() {
        return layers.clone();
    }

    /** The last shard's head (final norm, output matrix, soft cap). */
    public Head head() {
        return head;
    }

    @Override
    public ModelConfig config() {
        return config;
    }

    @Override
    public ShardSpec shard() {
        return shard;
    }

    @Override
    public ForwardState.BufferSizes bufferSizes() {
        return sizes;
    }

    @Override
    public ForwardState.Routing routing() {
        return routing;
    }

    @Override
    public int kvDim() {
        return localShape.kvDim();
    }

    @Override
    public java.util.List<WeightMatrix> streamedMatrices() {
        java.util.List<WeightMatrix> out = new java.util.ArrayList<>();
        for (DecoderLayer l : layers) {
            l.streamedMatrices(out::add);
        }
        if (head.output() != null) {
            out.add(head.output());
        }
        return out;
    }

    @Override
    public long weightBytes() {
        long bytes = 0;
        for (DecoderLayer l : layers) {
            bytes += l.weightBytes();
        }
        if (head.output() != null) {
            bytes += head.output().byteSize();
        }
        if (input.embeddings() != null) {
            bytes += input.embeddings().rowBytes();
        }
        return bytes;
    }

    @Override
    public void forwardLayers(Backend backend, ForwardState s, int batch, KvCache cache) {
        int dim = config.dims().embedding();
        WeightMatrix embd = input.embeddings();
        if (embd != null) {
            for (int b = 0; b < batch; b++) {
                backend.embed(embd, s.tokens[b], s.x, b * dim);
            }
            if (input.scale() != 1f) {
                float f = input.scale();
                for (int i = 0; i < batch * dim; i++) {
                    s.x[i] *= f;
                }
            }
        }
        Rope angles = null;
        for (int i = 0; i < layers.length; i++) {
            DecoderLayer layer = layers[i];
            Rope rope = layer.attention().rope();
            if (rope != angles) {
                rope.angles(s.rows, batch, s.cos, s.sin);
                angles = rope;
            }
            layer.forward(backend, s, batch, cache, i, allReduce, lora[i]);
        }
    }

    @Override
    public void outputNorm(Backend backend, float[] hidden, int count) {
        if (head.norm() == null) {
            throw new IllegalStateException("this shard (layers " + shard.firstLayer() + ".." + shard.endLayer() + ") has no output norm");
        }
        head.norm().apply(backend, hidden, hidden, count);
    }

    @Override
    public void head(Backend backend, float[] hidden, int count, float[] logits) {
        if (head.output() == null) {
            throw new IllegalStateException("this shard (layers " + shard.firstLayer() + ".." + shard.endLayer() + ") has no output head");
        }
        head.norm().apply(backend, hidden, hidden, count);
        int vocab = config.dims().vocab();
        int width = head.output().rows(); // the whole vocabulary, or this rank's rows of it
        backend.matmul(head.output(), hidden, logits, count);
        float cap = head.softcap();
        if (cap > 0f) {
            int n = count * width;
            for (int i = 0; i < n; i++) {
                logits[i] = (float) Math.tanh(logits[i] / cap) * cap;
            }
        }
        if (width != vocab) {
            allReduce.gatherColumns(logits, count, vocab, head.vocabFrom(), width);
        }
    }
}
