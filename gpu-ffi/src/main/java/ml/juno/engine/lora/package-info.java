/**
 * LoRA adapters over a (quantized, memory-mapped) base model: the adapter model and its base fingerprint, the
 * {@code .lora} file, llama.cpp's GGUF LoRA format, and the plan that turns played adapters into the per-layer deltas
 * of one shard, and the trainer (its forward/backward pass, the loop, checkpoints). Depends on {@code gguf},
 * {@code kernel}, {@code model}, {@code jfr}; never on a framework.
 */
package ml.juno.engine.lora;
