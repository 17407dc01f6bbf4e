package ml.juno.e2e.harness;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.lora.BaseFingerprint;
import ml.juno.engine.lora.LoraAdapter;
import ml.juno.engine.lora.LoraFile;
import ml.juno.engine.lora.LoraPair;
import ml.juno.engine.model.block.Projection;

/** A seeded random LoRA adapter on every projection of every layer of a model, written as a {@code .lora} file. */
public final class RandomLora {
    private RandomLora() {
    }

    public static void write(Path out, Path model, long seed) throws Exception {
        try (GgufFile f = GgufFile.open(model)) {
            BaseFingerprint fp = BaseFingerprint.of(f);
            SplittableRandom rnd = new SplittableRandom(seed);
            List<LoraPair> pairs = new ArrayList<>();
            for (int l = 0; l < fp.shapes().layers(); l++) {
                for (Projection t : Projection.values()) {
                    int[] d = LoraPair.dims(t, fp.shapes());
                    float[] a = new float[4 * d[0]];
                    float[] b = new float[d[1] * 4];
                    for (int i = 0; i < a.length; i++) {
                        a[i] = (float) rnd.nextDouble(-0.2, 0.2);
                    }
                    for (int i = 0; i < b.length; i++) {
                        b[i] = (float) rnd.nextDouble(-0.2, 0.2);
                    }
                    pairs.add(new LoraPair(l, t, 4, d[0], d[1], a, b));
                }
            }
            LoraFile.write(out, new LoraAdapter(new LoraAdapter.Header(LoraAdapter.FORMAT_VERSION, fp, EnumSet.allOf(Projection.class),
                    4, 8f, false, Map.of()), pairs));
        }
    }
}
