/**
 * The records of one forward step ({@link ml.juno.engine.step.StepBatch}); plain JDK records, so that the engine takes
 * them as they are and {@code ml.juno.model.wire.ProtoMapping} (shared-model) maps them to and from {@code node.proto}.
 */
package ml.juno.engine.step;
