/**
 * Tool (function) calling, framework-free: what the prompt shows the model ({@link ml.juno.coordinator.tools.ToolPrompt}),
 * the model's call syntax parsed back ({@link ml.juno.coordinator.tools.ToolSyntax}), per-choice stream splitting
 * ({@link ml.juno.coordinator.tools.ToolCallStream}) so a streamed answer reassembles to the blocking one.
 */
package ml.juno.coordinator.tools;
