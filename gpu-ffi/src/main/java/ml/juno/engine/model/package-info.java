/**
 * The engine's public face: {@link ml.juno.engine.model.Model#load} picks an architecture from the registry
 * ({@link ml.juno.engine.model.Architectures}) by {@code general.architecture}, {@link ml.juno.engine.model.InferenceSession}
 * runs batched forward steps ({@link ml.juno.engine.step.StepBatch} → {@link ml.juno.engine.model.Logits}) and
 * greedy generation, {@link ml.juno.engine.model.Bench} measures llama-bench style speeds. Depends on gguf, kernel, kv, step
 * and the architecture packages under it.
 */
package ml.juno.engine.model;
