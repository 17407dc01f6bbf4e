/** The {@code qwen2} architecture. Depends on model, model.block. */
package ml.juno.engine.model.qwen2;
