/**
 * Shared memory between Juno's processes on one host: the {@code /dev/shm} files' common header and sweep
 * ({@link ml.juno.model.shm.ShmFiles}), futexes to sleep on a word of such a file ({@link ml.juno.model.shm.Futex}), and
 * the coordinator's step channel to a node of its host ({@link ml.juno.model.shm.ControlChannel}). The nodes' own rings
 * (a stage's rows, a rank's partials) are in {@code ml.juno.node.runtime}.
 */
package ml.juno.model.shm;
