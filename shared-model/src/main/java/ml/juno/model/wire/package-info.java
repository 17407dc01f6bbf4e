/** Activation codec and the one proto ⇄ Java mapper (tensors, dtypes, byte orders, shard assignments). → generated proto classes. */
package ml.juno.model.wire;
