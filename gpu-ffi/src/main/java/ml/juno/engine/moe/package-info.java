/**
 * Streaming the routed experts of a mixture-of-experts model from the GGUF file through a RAM tier of fixed slots
 * ({@code --expert-cache}): {@link ml.juno.engine.moe.ExpertStore} (slots, heat ledger and LRU, telemetry),
 * {@link ml.juno.engine.moe.ExpertReader} (positional reads, many in flight, {@code O_DIRECT} where the file system
 * allows), {@link ml.juno.engine.moe.ExpertBudget} (the flag's value). Depends on {@code gguf}, {@code kernel},
 * {@code model.block} and {@code jfr}; the model package installs a store into its {@code MoeFfn}s.
 */
package ml.juno.engine.moe;
