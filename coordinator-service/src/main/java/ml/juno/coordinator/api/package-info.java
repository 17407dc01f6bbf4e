/**
 * The HTTP edge: thin JAX-RS resources for the OpenAI-compatible API ({@code /v1/chat/completions},
 * {@code /v1/completions}, {@code /v1/models}) and Juno's native {@code /v1/tokenize} and {@code /v1/detokenize}.
 * Each parses a record from api.dto, calls one service bean and maps the result; they run on virtual threads,
 * never on the event loop. Depends on api.dto and coordinator.service.
 */
package ml.juno.coordinator.api;
