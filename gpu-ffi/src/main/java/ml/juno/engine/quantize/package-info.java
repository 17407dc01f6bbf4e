/**
 * Quantizers: float rows to GGML block formats, bit-exact with ggml's reference quantizers
 * ({@code quantize_row_*_ref} in ggml-quants.c), and the file-level {@code quantize} tool with llama.cpp's
 * per-tensor type rules. Depends on {@code engine.tensor} and {@code engine.gguf}.
 */
package ml.juno.engine.quantize;
