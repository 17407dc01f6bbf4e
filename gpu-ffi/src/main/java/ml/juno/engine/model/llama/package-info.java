/** The {@code llama} architecture (Llama 1/2/3, TinyLlama, Mistral without sliding window). Depends on model, model.block, kernel, gguf. */
package ml.juno.engine.model.llama;
