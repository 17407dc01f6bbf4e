/** The {@code qwen3moe} architecture. Depends on model, model.block, model.qwen3. */
package ml.juno.engine.model.qwen3moe;
