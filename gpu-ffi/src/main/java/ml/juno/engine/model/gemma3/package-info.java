/** The {@code gemma3} architecture (text decoder). Depends on model, model.block. */
package ml.juno.engine.model.gemma3;
