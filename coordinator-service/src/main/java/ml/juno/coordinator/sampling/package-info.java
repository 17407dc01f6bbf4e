/**
 * Per-request sampler chain (penalties, logit bias, temperature, top-k, top-p, min-p, seeded draw),
 * log-probabilities and stopping (stop tokens, stop strings, length). Plain Java, no framework;
 * depends on the JDK only. Hot paths allocate nothing: buffers live in a {@link ml.juno.coordinator.sampling.Sampler}.
 */
package ml.juno.coordinator.sampling;
