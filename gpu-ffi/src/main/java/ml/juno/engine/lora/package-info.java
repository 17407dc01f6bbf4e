/**
 * LoRA adapters over a (quantized, memory-mapped) base model: the adapter model and its base fingerprint, the
 * {@code .lora} file, llama.cpp's GGUF LoRA format, and the plan that turns played adapters into the per-layer deltas
 * of one shard. Depends on {@code gguf}, {@code kernel}, {@code model}; never on a framework.
 */
package ml.juno.engine.lora;
