/** Which part of a model each node serves (layer ranges balanced by bytes, tensor slices), what it is asked to load and what it says it loaded. Plain records. */
package ml.juno.model.shard;
