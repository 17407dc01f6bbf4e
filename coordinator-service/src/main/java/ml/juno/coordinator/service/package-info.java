/**
 * CDI beans between the HTTP edge and the engine: configuration ({@link ml.juno.coordinator.service.JunoConfig}),
 * the engine's lifecycle ({@link ml.juno.coordinator.service.EngineProducer}), generation of one request's
 * choices ({@link ml.juno.coordinator.service.GenerationService}), health checks and metrics.
 * No JSON here. Depends on coordinator.engine, tokenizer, sampling, scheduler.
 */
package ml.juno.coordinator.service;
