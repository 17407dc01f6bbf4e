/**
 * One forward step, the one shape it has from the scheduler's plan to the kernels: {@link ml.juno.engine.step.StepBatch}
 * (rows and block tables), validated once in its constructors. Plain records of the JDK; the engine's
 * {@code InferenceSession.forward} takes them as they are, and {@code ml.juno.model.wire.ProtoMapping} (shared-model)
 * maps them to and from {@code node.proto}.
 */
package ml.juno.engine.step;
