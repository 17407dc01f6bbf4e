/**
 * Continuous batching: waiting and running sequences, a token budget per step (decode rows first, then
 * prefill chunks), priorities, a bounded queue, cancellation, preemption under KV pressure.
 * {@code schedule()} yields a {@link ml.juno.coordinator.scheduler.StepPlan} whose rows carry their
 * sequences' sampler states, the engine samples and returns a {@link ml.juno.coordinator.scheduler.StepResult}
 * of token ids, {@code update()} appends them and stops. Plain Java,
 * no framework; depends on {@code coordinator.sampling} and {@code coordinator.kvcache}.
 */
package ml.juno.coordinator.scheduler;
