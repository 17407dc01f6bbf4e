/**
 * One forward step as both sides of the wire see it: {@link ml.juno.model.step.StepBatch} (rows and block tables),
 * validated once in its constructors. Plain records; no dependencies. {@code ml.juno.model.wire.ProtoMapping} maps it
 * to and from {@code node.proto}.
 */
package ml.juno.model.step;
