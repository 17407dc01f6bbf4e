/**
 * Key/value storage for attention: off-heap memory addressed by (layer, sequence slot, position). Storage only; which
 * slot a sequence gets and when it is freed is decided by callers. Depends on the JDK only.
 */
package ml.juno.engine.kv;
