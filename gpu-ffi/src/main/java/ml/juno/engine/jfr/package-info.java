/**
 * Java Flight Recorder events of the engine ({@code juno.ForwardPass}, {@code juno.MatMul}, {@code juno.ExpertStep},
 * {@code juno.LoraTrainStep}): plain {@code jdk.jfr}
 * classes, no framework. Each event keeps a static probe instance so a hot path asks {@link jdk.jfr.Event#isEnabled()}
 * without allocating; events are only created while a recording has them enabled. Depends on {@code jdk.jfr} and
 * {@code kernel} (for the matrix being multiplied).
 */
package ml.juno.engine.jfr;
