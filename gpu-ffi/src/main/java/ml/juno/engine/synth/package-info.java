/**
 * Synthetic models: random weights with the exact tensor shapes and llama.cpp-compatible metadata of a real
 * model, written straight to GGUF in any quantized type, for benchmarks. Depends on {@code engine.gguf},
 * {@code engine.quantize} and {@code engine.tensor}.
 */
package ml.juno.engine.synth;
