/**
 * Continuous batching: waiting and running sequences, a token budget per step (decode rows first, then
 * prefill chunks), priorities, a bounded queue, cancellation, preemption under KV pressure.
 * {@code schedule()} yields a {@link ml.juno.coordinator.scheduler.StepPlan}, the engine returns a
 * {@link ml.juno.coordinator.scheduler.StepResult}, {@code update()} samples and stops. Plain Java,
 * no framework; depends on {@code coordinator.sampling} and {@code coordinator.kvcache}.
 */
package ml.juno.coordinator.scheduler;
