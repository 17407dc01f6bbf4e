package ml.juno.engine.model;

/**
 * Rotary position embedding settings: {@code dims} rotated dimensions per head, base frequency, linear frequency scale
 * ({@code 1/factor}; 1 = none) and the pairing: NeoX rotates {@code (i, i+dims/2)}, normal (GGUF llama) {@code (2i, 2i+1)}.
 */
public record RopeConfig(int dims, float freqBase, float freqScale, boolean neox) {
    public RopeConfig {
        if (dims <= 0 || dims % 2 != 0 || !(freqBase > 0f) || !(freqScale > 0f)) {
            throw new IllegalArgumentException("bad rope config: dims " + dims + ", base " + freqBase + ", scale " + freqScale);
        }
    }
}
