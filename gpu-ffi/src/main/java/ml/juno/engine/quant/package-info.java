/**
 * GGML block formats: one final class per format holding its scalar reference dequantizer (bit-exact with ggml's
 * reference code), the {@link ml.juno.engine.quant.Dequantize} dispatcher and {@link ml.juno.engine.quant.Half}.
 * Depends on {@code ml.juno.engine.tensor} (and {@code gguf} for the test helper {@code Dequantize.tensor}).
 */
package ml.juno.engine.quant;
