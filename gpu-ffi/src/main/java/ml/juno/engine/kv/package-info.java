/**
 * Key/value storage for attention: off-heap memory addressed by (layer, sequence slot, position), either flat (one
 * context-sized region per slot) or paged (a pool of fixed-size blocks reached through per-slot block tables, so
 * sequences can share prefix blocks). Storage only; which slot or block a sequence gets and when it is freed is
 * decided by callers. Depends on the JDK only.
 */
package ml.juno.engine.kv;
