package ml.juno.engine.lora;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufMetadata;
import ml.juno.engine.gguf.GgufTensorInfo;
import ml.juno.engine.kernel.Backends;
import ml.juno.engine.model.block.Projection;
import ml.juno.engine.quantize.GgufStreamWriter;
import ml.juno.engine.tensor.GgmlType;

/** Random adapters for a base, an all-F32 copy of a GGUF, model files: what the LoRA tests share. */
final class LoraFixtures {

    private LoraFixtures() {}

    static Path model(String name) {
        String dir = System.getProperty("juno.models.dir");
        for (String sub : List.of("", "testdata/", "testdata/tiny-random/")) {
            Path p = Path.of(dir, sub + name);
            if (java.nio.file.Files.exists(p)) {
                return p;
            }
        }
        throw new IllegalStateException(name + " not found under " + dir);
    }

    /** An adapter on every layer and {@code targets}, A and B Gaussian-ish with {@code magnitude}, seeded. */
    static LoraAdapter random(GgufFile base, List<Projection> targets, int rank, float alpha, boolean rs, long seed,
                              float magnitude) {
        BaseFingerprint fp = BaseFingerprint.of(base);
        SplittableRandom rnd = new SplittableRandom(seed);
        List<LoraPair> pairs = new ArrayList<>();
        for (int l = 0; l < fp.shapes().layers(); l++) {
            for (Projection t : targets) {
                int[] d = LoraPair.dims(t, fp.shapes());
                float[] a = new float[rank * d[0]];
                float[] b = new float[d[1] * rank];
                for (int i = 0; i < a.length; i++) {
                    a[i] = (float) (rnd.nextDouble(-1, 1) * magnitude);
                }
                for (int i = 0; i < b.length; i++) {
                    b[i] = (float) (rnd.nextDouble(-1, 1) * magnitude);
                }
                pairs.add(new LoraPair(l, t, rank, d[0], d[1], a, b));
            }
        }
        return new LoraAdapter(new LoraAdapter.Header(LoraAdapter.FORMAT_VERSION, fp, EnumSet.copyOf(targets), rank, alpha, rs,
                Map.of("seed", Long.toString(seed))), pairs);
    }

    /** A copy of {@code in} with every tensor decoded to F32 (so products are exact enough to compare at 1e-4). */
    static void writeF32Copy(GgufFile in, Path out) throws IOException {
        writeF32Copy(in, out, md -> {});
    }

    /** {@link #writeF32Copy(GgufFile, Path)} with the metadata entries edited by {@code edit} (a variant of the model). */
    static void writeF32Copy(GgufFile in, Path out, java.util.function.Consumer<List<GgufStreamWriter.Entry>> edit) throws IOException {
        GgufMetadata m = in.metadata();
        List<GgufStreamWriter.Entry> md = new ArrayList<>();
        for (String key : m.keys()) {
            if (!key.equals("general.file_type")) {
                md.add(new GgufStreamWriter.Entry(key, m.type(key), m.getRaw(key)));
            }
        }
        edit.accept(md);
        List<GgufStreamWriter.TensorSpec> specs = new ArrayList<>();
        for (GgufTensorInfo t : in.tensors()) {
            specs.add(new GgufStreamWriter.TensorSpec(t.name(), GgmlType.F32, t.shape()));
        }
        try (GgufStreamWriter w = GgufStreamWriter.create(out, md, specs)) {
            for (int i = 0; i < in.tensors().size(); i++) {
                GgufTensorInfo t = in.tensors().get(i);
                float[] v = new float[Math.toIntExact(t.elementCount())];
                Backends.decode(t.type(), in.data(t), 0, v, 0, v.length);
                ByteBuffer buf = ByteBuffer.allocate(4 * v.length).order(ByteOrder.LITTLE_ENDIAN);
                buf.asFloatBuffer().put(v);
                w.write(w.dataPosition(i), buf);
            }
        }
    }
}
