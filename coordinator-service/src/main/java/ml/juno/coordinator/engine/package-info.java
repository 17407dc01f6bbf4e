/**
 * The generation loop and its seams: {@link ml.juno.coordinator.engine.Executor} (runs a step plan on an
 * engine or a cluster), {@link ml.juno.coordinator.engine.TokenSink} (where a request's tokens go) and
 * {@link ml.juno.coordinator.engine.PieceDecoder} (incremental detokenization); and the in-process engine:
 * {@link ml.juno.coordinator.engine.InferenceEngine} (model + tokenizer + scheduler + loop, the facade the
 * HTTP API and the CLI use) with {@link ml.juno.coordinator.engine.LocalExecutor} running plans on a paged
 * {@code InferenceSession}. Plain Java; depends on {@code coordinator.scheduler}, {@code coordinator.sampling},
 * {@code coordinator.kvcache}, {@code coordinator.tokenizer} and the engine ({@code ml.juno.engine}).
 */
package ml.juno.coordinator.engine;
