/** Tensor element types and their block facts ({@link ml.juno.engine.tensor.GgmlType}). Depends on nothing. */
package ml.juno.engine.tensor;
