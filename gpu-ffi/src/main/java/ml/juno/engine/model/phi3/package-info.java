/** The {@code phi3} architecture. Depends on model, model.block. */
package ml.juno.engine.model.phi3;
