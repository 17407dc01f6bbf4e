/**
 * Test oracles for the GGML block formats: one final class per format holding its scalar reference dequantizer
 * (bit-exact with ggml's reference code), the {@link ml.juno.engine.quant.Dequantize} dispatcher and
 * {@link ml.juno.engine.quant.Half}. The kernels and quantizers are checked against them; nothing in the product runs
 * them. Depends on {@code ml.juno.engine.tensor} and {@code gguf}.
 */
package ml.juno.engine.quant;
