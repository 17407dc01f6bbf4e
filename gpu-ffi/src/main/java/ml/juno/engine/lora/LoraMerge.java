package ml.juno.engine.lora;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufKeys;
import ml.juno.engine.gguf.GgufMetadata;
import ml.juno.engine.gguf.GgufTensorInfo;
import ml.juno.engine.gguf.TensorNames;
import ml.juno.engine.kernel.Backends;
import ml.juno.engine.model.block.Projection;
import ml.juno.engine.quantize.GgufStreamWriter;
import ml.juno.engine.quantize.ProgressListener;
import ml.juno.engine.quantize.RowQuantizer;
import ml.juno.engine.quantize.RowQuantizers;
import ml.juno.engine.tensor.GgmlType;

/**
 * Merges played adapters into a copy of the base: each adapted tensor is dequantized, gets
 * {@code Σ scale·B·A} added to its rows (fused tensors: to the rows of the projection), and is written as F32 by
 * default, or in a requested type through Juno's quantizers (which rounds the small deltas away if the type is
 * coarse); every other tensor, and all metadata, is copied byte for byte. Written to a temporary file beside the
 * output and renamed.
 */
public final class LoraMerge {

    private LoraMerge() {}

    /** The type adapted tensors are written in: their own ({@code keep}), or one type. */
    public record Target(GgmlType type) {
        /** Each adapted tensor keeps its block type. */
        public static final Target KEEP = new Target(null);
        /** F32: nothing is lost (the default). */
        public static final Target F32 = new Target(GgmlType.F32);

        GgmlType typeFor(GgmlType original) {
            return type == null ? original : type;
        }
    }

    /** How many tensors were adapted and copied. */
    public record Report(int adapted, int copied, long bytes) {}

    public static Report merge(GgufFile base, List<LoraPlan.Played> adapters, Path output, Target target,
                               ProgressListener progress) throws IOException {
        Objects.requireNonNull(target, "target");
        if (adapters.isEmpty()) {
            throw new IllegalArgumentException("merge needs at least one adapter");
        }
        BaseFingerprint fp = BaseFingerprint.of(base);
        List<GgufTensorInfo> tensors = base.tensors();
        List<GgufStreamWriter.TensorSpec> specs = new ArrayList<>();
        boolean[] adapted = new boolean[tensors.size()];
        long total = 0;
        for (int i = 0; i < tensors.size(); i++) {
            GgufTensorInfo t = tensors.get(i);
            adapted[i] = !parts(t.name(), fp, adapters).isEmpty();
            GgmlType type = adapted[i] ? target.typeFor(t.type()) : t.type();
            if (adapted[i] && !RowQuantizers.supports(type)) {
                throw new IllegalArgumentException("cannot write adapted tensor " + t.name() + " as " + type);
            }
            if (adapted[i] && t.rowLength() % type.blockSize != 0) {
                throw new IllegalArgumentException("adapted tensor " + t.name() + " has rows of " + t.rowLength()
                        + ", not a multiple of the " + type + " block size " + type.blockSize + "; merge with --type F32 or F16");
            }
            specs.add(new GgufStreamWriter.TensorSpec(t.name(), type, t.shape()));
            total += t.byteSize();
        }
        List<GgufStreamWriter.Entry> md = new ArrayList<>();
        GgufMetadata m = base.metadata();
        for (String key : m.keys()) {
            if (!key.equals(GgufKeys.GENERAL_FILE_TYPE)) {
                md.add(new GgufStreamWriter.Entry(key, m.type(key), m.getRaw(key)));
            }
        }
        md.add(GgufStreamWriter.Entry.string("juno.lora.merged", LoraPlan.describe(adapters)));
        long bytes = total;
        AtomicWrite.to(output, tmp -> {
            long done = 0;
            try (GgufStreamWriter w = GgufStreamWriter.create(tmp, md, specs)) {
                for (int i = 0; i < tensors.size(); i++) {
                    GgufTensorInfo t = tensors.get(i);
                    if (adapted[i]) {
                        w.write(w.dataPosition(i), ByteBuffer.wrap(adaptedBytes(base, t, fp, adapters, specs.get(i).type())));
                    } else {
                        w.write(w.dataPosition(i), base.data(t).asByteBuffer());
                    }
                    done += t.byteSize();
                    progress.progress("merge", done, bytes);
                }
            }
        });
        int nAdapted = 0;
        for (boolean a : adapted) {
            nAdapted += a ? 1 : 0;
        }
        return new Report(nAdapted, tensors.size() - nAdapted, Files.size(output));
    }

    /** A projection held in rows {@code [rowFrom, rowFrom + pair.out)} of a base tensor, with its scale. */
    private record Part(LoraAdapter adapter, LoraPair pair, float scale, int rowFrom) {}

    private static List<Part> parts(String tensor, BaseFingerprint fp, List<LoraPlan.Played> adapters) {
        List<Part> out = new ArrayList<>();
        int layer = TensorNames.layerOf(tensor);
        if (layer < 0) {
            return out;
        }
        var s = fp.shapes();
        for (LoraPlan.Played p : adapters) {
            for (Projection t : Projection.values()) {
                LoraPair pair = p.adapter().pair(layer, t);
                if (pair == null) {
                    continue;
                }
                int rowFrom = -1;
                if (fp.fusedQkv() && (t == Projection.Q || t == Projection.K || t == Projection.V)) {
                    if (tensor.equals(TensorNames.block(layer, TensorNames.ATTN_QKV))) {
                        rowFrom = t == Projection.Q ? 0 : t == Projection.K ? s.qDim() : s.qDim() + s.kvDim();
                    }
                } else if (fp.fusedGateUp() && (t == Projection.GATE || t == Projection.UP)) {
                    if (tensor.equals(TensorNames.block(layer, TensorNames.FFN_UP))) {
                        rowFrom = t == Projection.GATE ? 0 : s.ffn();
                    }
                } else if (tensor.equals(TensorNames.block(layer, LoraPair.tensor(t)))) {
                    rowFrom = 0;
                }
                if (rowFrom >= 0) {
                    out.add(new Part(p.adapter(), pair, p.scale() * p.adapter().header().scale(pair.rank()), rowFrom));
                }
            }
        }
        return out;
    }

    private static byte[] adaptedBytes(GgufFile base, GgufTensorInfo t, BaseFingerprint fp, List<LoraPlan.Played> adapters,
                                       GgmlType type) {
        int cols = Math.toIntExact(t.rowLength());
        int rows = Math.toIntExact(t.rowCount());
        float[] w = new float[Math.multiplyExact(rows, cols)];
        Backends.decode(t.type(), base.data(t), 0, w, 0, w.length);
        for (Part part : parts(t.name(), fp, adapters)) {
            LoraPair p = part.pair();
            if (p.in() != cols || part.rowFrom() + p.out() > rows) {
                throw new IllegalArgumentException("LoRA pair for " + t.name() + " (" + p.in() + "→" + p.out()
                        + ") does not fit the tensor's " + rows + " rows of " + cols);
            }
            float s = part.scale();
            int r = p.rank();
            for (int i = 0; i < p.out(); i++) {
                int o = (part.rowFrom() + i) * cols;
                for (int j = 0; j < r; j++) {
                    float bij = p.b()[i * r + j] * s;
                    int ao = j * cols;
                    for (int k = 0; k < cols; k++) {
                        w[o + k] += bij * p.a()[ao + k];
                    }
                }
            }
        }
        byte[] out = new byte[Math.toIntExact(type.byteSize(cols) * rows)];
        RowQuantizer q = RowQuantizers.create(type);
        long rowBytes = type.byteSize(cols);
        for (int r = 0; r < rows; r++) {
            q.quantize(w, r * cols, cols, out, (int) (r * rowBytes));
        }
        return out;
    }
}
