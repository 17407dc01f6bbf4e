/** Which part of a model each node serves: layer ranges balanced by bytes, tensor slices. Plain records; no dependencies. */
package ml.juno.model.shard;
