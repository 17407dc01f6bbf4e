/**
 * KV-cache bookkeeping on the coordinator: paged block allocation per sequence, automatic prefix
 * caching (full blocks keyed by a hash chain over their tokens, shared with reference counts, kept
 * after a request ends and evicted through Caffeine), counters. Block ids only: the memory itself lives
 * in the engine or on the nodes. Plain Java; depends on the JDK and Caffeine.
 */
package ml.juno.coordinator.kvcache;
