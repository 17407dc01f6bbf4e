package ml.juno.engine.sampling;

/** Stage 3: divides the logits by the temperature (flattening above 1, sharpening below). */
public final class Temperature {
    private Temperature() {
    }

    public static void apply(float[] logits, int vocab, float temperature) {
        if (!(temperature > 0f)) {
            throw new IllegalArgumentException("temperature stage needs t > 0 (0 is greedy), got " + temperature);
        }
        if (temperature == 1f) {
            return;
        }
        for (int i = 0; i < vocab; i++) {
            logits[i] /= temperature; // a division, as llama.cpp does, so results match bit for bit
        }
    }
}
