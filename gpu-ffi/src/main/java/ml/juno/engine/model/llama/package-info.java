/** The {@code llama} architecture (Llama 1/2/3, TinyLlama, Mistral with or without sliding window). Depends on model, model.block. */
package ml.juno.engine.model.llama;
