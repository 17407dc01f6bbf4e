/**
 * The cluster executor: runs step plans on node processes over gRPC (pipeline stages or tensor-parallel slices),
 * with deadlines, reconnection and node health. Generated proto classes stay inside this package.
 * → coordinator.engine, coordinator.scheduler, shared-model (proto, ProtoMapping, ShardAssignment), gpu-ffi (GGUF).
 */
package ml.juno.coordinator.cluster;
