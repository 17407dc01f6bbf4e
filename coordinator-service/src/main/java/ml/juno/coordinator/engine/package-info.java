/**
 * The generation loop and its seams: {@link ml.juno.coordinator.engine.Executor} (runs a step plan on an
 * engine or a cluster and samples next to the logits, {@link ml.juno.coordinator.engine.SamplingStage}),
 * {@link ml.juno.coordinator.engine.TokenEvents} (where the loop hands a sequence's token ids), and the
 * per-request {@link ml.juno.coordinator.engine.RequestOutput} (detokenizing, stop strings and the one
 * {@link ml.juno.coordinator.engine.GenerationListener}, on the request's own thread); and the in-process engine:
 * {@link ml.juno.coordinator.engine.InferenceEngine} (model + tokenizer + scheduler + loop, the facade the
 * HTTP API and the CLI use) with {@link ml.juno.coordinator.engine.LocalExecutor} running plans on a paged
 * {@code InferenceSession}. Plain Java; depends on {@code coordinator.scheduler}, {@code coordinator.sampling},
 * {@code coordinator.kvcache}, {@code coordinator.tokenizer} and the engine ({@code ml.juno.engine}).
 */
package ml.juno.coordinator.engine;
