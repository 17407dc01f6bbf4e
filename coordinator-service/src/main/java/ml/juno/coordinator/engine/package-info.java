/**
 * The generation loop and its seams: {@link ml.juno.coordinator.engine.Executor} (runs a step plan on an
 * engine or a cluster), {@link ml.juno.coordinator.engine.TokenSink} (where a request's tokens go) and
 * {@link ml.juno.coordinator.engine.PieceDecoder} (incremental detokenization). Plain Java; depends on
 * {@code coordinator.scheduler} and {@code coordinator.sampling}.
 */
package ml.juno.coordinator.engine;
