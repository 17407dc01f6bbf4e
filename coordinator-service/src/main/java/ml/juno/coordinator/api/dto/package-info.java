/**
 * The OpenAI wire format and Juno's native JSON: request and response records, their validation, the SSE
 * chunk writer, and the exception mappers that turn every failure into OpenAI's error envelope. JSON and SSE
 * shapes exist only here. Depends on coordinator.service (its exceptions and results), sampling, scheduler.
 */
package ml.juno.coordinator.api.dto;
