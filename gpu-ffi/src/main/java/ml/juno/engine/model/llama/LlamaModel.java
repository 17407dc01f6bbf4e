package ml.juno.engine.model.llama;

import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.kernel.AttentionShape;
import ml.juno.engine.kernel.Backend;
import ml.juno.engine.kernel.WeightMatrix;
import ml.juno.engine.kv.KvCache;
import ml.juno.engine.model.DecoderModel;
import ml.juno.engine.model.ModelConfig;
import ml.juno.engine.model.ModelKeys;
import ml.juno.engine.model.ModelTensors;
import ml.juno.engine.model.ShardSpec;
import ml.juno.engine.model.block.AllReduce;
import ml.juno.engine.model.block.Attention;
import ml.juno.engine.model.block.ForwardState;
import ml.juno.engine.model.block.RmsNorm;
import ml.juno.engine.model.block.Rope;
import ml.juno.engine.model.block.SwiGluFfn;

/**
 * A loaded llama model or shard: per layer {@code x += attn(norm(x)); x += ffn(norm(x))}, then
 * {@code logits = output(norm(x))}. Tensor-parallel shards hold a contiguous slice of heads and FFN columns.
 */
public final class LlamaModel implements DecoderModel {
    private final ModelConfig config;
    private final ShardSpec shard;
    private final AttentionShape localShape;
    private final int localFfn;
    private final WeightMatrix embeddings;
    private final RmsNorm outputNorm;
    private final WeightMatrix output;
    private final Rope rope;
    private final Layer[] layers;
    private final AllReduce allReduce;

    private record Layer(RmsNorm attnNorm, Attention attention, RmsNorm ffnNorm, SwiGluFfn ffn) {}

    private LlamaModel(ModelConfig config, ShardSpec shard, Parts parts) {
        this.config = config;
        this.shard = shard;
        this.localShape = parts.localShape;
        this.localFfn = parts.localFfn;
        this.embeddings = parts.embeddings;
        this.outputNorm = parts.outputNorm;
        this.output = parts.output;
        this.rope = parts.rope;
        this.layers = parts.layers;
        this.allReduce = AllReduce.NONE;
    }

    private static final class Parts {
        AttentionShape localShape;
        int localFfn;
        WeightMatrix embeddings;
        RmsNorm outputNorm;
        WeightMatrix output;
        Rope rope;
        Layer[] layers;
    }

    /** Maps and checks every tensor of {@code shard}. */
    public static LlamaModel load(GgufFile file, ModelConfig config, ShardSpec shard) {
        ModelTensors t = new ModelTensors(file);
        var d = config.dims();
        var a = config.attention();
        if (shard.endLayer() > d.layers()) {
            throw new IllegalArgumentException("shard layers [" + shard.firstLayer() + ", " + shard.endLayer()
                    + ") exceed the model's " + d.layers() + " layers");
        }
        int parts = shard.tensorParts();
        if (parts > 1) {
            // the weights below can already be sliced by heads/FFN columns, but nothing combines the partial sums yet
            throw new IllegalArgumentException("tensor-parallel shards (" + parts + " slices) need an all-reduce, which is not wired yet");
        }
        if (a.kvHeads() % parts != 0 || d.ffn() % parts != 0) {
            throw new IllegalArgumentException("cannot split " + a.kvHeads() + " KV heads and FFN " + d.ffn() + " into " + parts + " slices");
        }
        int hLocal = a.heads() / parts;
        int kvLocal = a.kvHeads() / parts;
        int ffLocal = d.ffn() / parts;
        int qDim = a.heads() * a.headDim();
        int kvDim = a.kvHeads() * a.headDim();
        Parts p = new Parts();
        p.localShape = new AttentionShape(hLocal, kvLocal, a.headDim(), a.scale());
        p.localFfn = ffLocal;
        float[] factors = t.has(ModelKeys.ROPE_FREQS) ? t.vector(ModelKeys.ROPE_FREQS, config.rope().dims() / 2) : null;
        p.rope = new Rope(config.rope().dims(), config.rope().freqBase(), config.rope().freqScale(), factors, config.rope().neox());
        WeightMatrix embd = t.matrix(ModelKeys.TOKEN_EMBD, d.embedding(), d.vocab());
        p.embeddings = shard.embeds() ? embd : null;
        if (shard.isLast(d.layers())) {
            p.outputNorm = new RmsNorm(t.vector(ModelKeys.OUTPUT_NORM, d.embedding()), config.normEps());
            p.output = t.optionalMatrix(ModelKeys.OUTPUT, d.embedding(), d.vocab()).orElse(embd);
        }
        int r = shard.tensorRank();
        p.layers = new Layer[shard.layerCount()];
        for (int i = 0; i < p.layers.length; i++) {
            int l = shard.firstLayer() + i;
            WeightMatrix wq = t.matrix(ModelKeys.block(l, ModelKeys.ATTN_Q), d.embedding(), qDim);
            WeightMatrix wk = t.matrix(ModelKeys.block(l, ModelKeys.ATTN_K), d.embedding(), kvDim);
            WeightMatrix wv = t.matrix(ModelKeys.block(l, ModelKeys.ATTN_V), d.embedding(), kvDim);
            WeightMatrix wo = t.matrix(ModelKeys.block(l, ModelKeys.ATTN_OUTPUT), qDim, d.embedding());
            WeightMatrix wg = t.matrix(ModelKeys.block(l, ModelKeys.FFN_GATE), d.embedding(), d.ffn());
            WeightMatrix wu = t.matrix(ModelKeys.block(l, ModelKeys.FFN_UP), d.embedding(), d.ffn());
            WeightMatrix wd = t.matrix(ModelKeys.block(l, ModelKeys.FFN_DOWN), d.ffn(), d.embedding());
            if (parts > 1) {
                int hd = a.headDim();
                wq = wq.rowSlice(r * hLocal * hd, hLocal * hd);
                wk = wk.rowSlice(r * kvLocal * hd, kvLocal * hd);
                wv = wv.rowSlice(r * kvLocal * hd, kvLocal * hd);
                wo = wo.columnSlice(r * hLocal * hd, hLocal * hd);
                wg = wg.rowSlice(r * ffLocal, ffLocal);
                wu = wu.rowSlice(r * ffLocal, ffLocal);
                wd = wd.columnSlice(r * ffLocal, ffLocal);
            }
            p.layers[i] = new Layer(
                    new RmsNorm(t.vector(ModelKeys.block(l, ModelKeys.ATTN_NORM), d.embedding()), config.normEps()),
                    new Attention(new Attention.AttentionWeights(wq, wk, wv, wo), p.localShape, p.rope),
                    new RmsNorm(t.vector(ModelKeys.block(l, ModelKeys.FFN_NORM), d.embedding()), config.normEps()),
                    new SwiGluFfn(wg, wu, wd));
        }
        return new LlamaModel(config, shard, p);
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
        return new ForwardState.BufferSizes(config.dims().embedding(), localShape.qDim(), localShape.kvDim(), localFfn,
                rope.dims() / 2);
    }

    @Override
    public int kvDim() {
        return localShape.kvDim();
    }

    @Override
    public long weightBytes() {
        long bytes = 0;
        for (Layer l : layers) {
            bytes += l.attention.weightBytes() + l.ffn.weightBytes();
        }
        if (output != null) {
            bytes += output.byteSize();
        }
        if (embeddings != null) {
            bytes += embeddings.rowBytes();
        }
        return bytes;
    }

    @Override
    public void forwardLayers(Backend backend, ForwardState s, int batch, KvCache cache) {
        int dim = config.dims().embedding();
        if (embeddings != null) {
            for (int b = 0; b < batch; b++) {
                backend.embed(embeddings, s.tokens[b], s.x, b * dim);
            }
        }
        rope.angles(s.rows, batch, s.cos, s.sin);
        for (int i = 0; i < layers.length; i++) {
            Layer layer = layers[i];
            layer.attnNorm.apply(backend, s.x, s.xb, batch);
            layer.attention.forward(backend, s, batch, cache, i);
            allReduce.sum(s.proj, batch, dim);
            backend.add(s.x, s.proj, batch * dim);
            layer.ffnNorm.apply(backend, s.x, s.xb, batch);
            layer.ffn.forward(backend, s, batch);
            allReduce.sum(s.proj, batch, dim);
            backend.add(s.x, s.proj, batch * dim);
        }
    }

    @Override
    public void head(Backend backend, float[] hidden, int count, float[] logits) {
        if (output == null) {
            throw new IllegalStateException("this shard (layers " + shard.firstLayer() + ".." + shard.endLayer() + ") has no output head");
        }
        outputNorm.apply(backend, hidden, hidden, count);
        backend.matmul(output, hidden, logits, count);
    }
}
