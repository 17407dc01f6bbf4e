/**
 * Java Flight Recorder events of the coordinator ({@code juno.SchedulerStep}, {@code juno.TokenProduced},
 * {@code juno.Tokenizer}, {@code juno.TemplateFormat}, {@code juno.KvCache}) and the summary of recordings that
 * {@code juno metrics} prints. Plain {@code jdk.jfr}, no CDI: each event has a static probe so hot paths check
 * {@link jdk.jfr.Event#isEnabled()} without allocating. Depends on {@code jdk.jfr} only (the summary also on Jackson
 * for its JSON).
 */
package ml.juno.coordinator.jfr;
