package ml.juno.engine.kernel.cpu;

/**
 * The form activations take before a dot product with weights of a given type: llama.cpp's {@code vec_dot_type}
 * ({@link CpuTypeTraits#activation}). The float formats round each value ({@link ActivationRounding}); the Q8 formats
 * quantize blocks of them ({@link QuantActivations}) for integer dot products.
 */
enum ActivationFormat {
    /** Floats as they are. */
    F32,
    /** Rounded to F16. */
    F16,
    /** Rounded to BF16. */
    BF16,
    /** Blocks of 32 with an F16 scale. */
    Q8_0,
    /** Q8_0 blocks with the F16-rounded {@code d·Σq} of each, for the weight types with a min. */
    Q8_1,
    /** Blocks of 256 with an F32 scale and the sums of every 16. */
    Q8_K
}
