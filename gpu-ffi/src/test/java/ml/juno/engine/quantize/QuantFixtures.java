package ml.juno.engine.quantize;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Path;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufTensorInfo;
import ml.juno.engine.gguf.TestModels;

/** The shipped llama.cpp quantizations and their F32 sources (SOURCES.md sections 2 and 5). */
final class QuantFixtures {
    private QuantFixtures() {
    }

    static Path tinyRandom(String suffix) {
        return TestModels.testdata().resolve("tiny-random").resolve("tiny-llama-random-" + suffix + ".gguf");
    }

    static Path tinyF32() {
        return tinyRandom("F32");
    }

    /** {@code stories260K.gguf} (the F32 source) for an empty suffix, else {@code stories260K-<suffix>.gguf}. */
    static Path stories(String suffix) {
        return suffix.isEmpty() ? TestModels.dir().resolve("stories260K.gguf")
                : TestModels.testdata().resolve("stories260K-" + suffix + ".gguf");
    }

    static GgufFile open(Path p) {
        try {
            return GgufFile.open(p);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static float[] f32(GgufFile f, GgufTensorInfo t) {
        MemorySegment s = f.data(t);
        float[] out = new float[Math.toIntExact(t.elementCount())];
        MemorySegment.copy(s, ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 0, out, 0, out.length);
        return out;
    }

    static byte[] bytes(GgufFile f, GgufTensorInfo t) {
        return f.data(t).toArray(ValueLayout.JAVA_BYTE);
    }

    /** ggml test-quantize-fns data: 0.1 + 2 cos(i + offset). */
    static float[] cosData(int n, float offset) {
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = 0.1f + 2 * (float) Math.cos(i + offset);
        }
        return x;
    }

    /** ggml test-quantize-fns {@code array_rmse}: sqrt(Σ diff²) / n (its name, its normalization). */
    static double ggmlRmse(float[] a, float[] b) {
        double sum = 0;
        for (int i = 0; i < a.length; i++) {
            double d = a[i] - b[i];
            sum += d * d;
        }
        return Math.sqrt(sum) / a.length;
    }

    /** sqrt(mean (a-b)²) / sqrt(mean a²). */
    static double relativeRmse(float[] a, float[] b) {
        double d2 = 0;
        double a2 = 0;
        for (int i = 0; i < a.length; i++) {
            double d = a[i] - b[i];
            d2 += d * d;
            a2 += (double) a[i] * a[i];
        }
        return Math.sqrt(d2 / a2);
    }
}
