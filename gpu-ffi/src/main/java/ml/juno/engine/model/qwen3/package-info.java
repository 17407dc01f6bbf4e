/** The {@code qwen3} architecture. Depends on model, model.block. */
package ml.juno.engine.model.qwen3;
