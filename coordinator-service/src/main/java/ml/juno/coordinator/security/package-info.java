/**
 * Who may call the API and how much (framework-free): API keys ({@link ml.juno.coordinator.security.ApiKeys},
 * compared in constant time, reloaded from their file when it changes), bind-address checks, and per-key rate
 * limits over Resilience4j ({@link ml.juno.coordinator.security.KeyLimits}). The Quarkus adapter is
 * {@code ml.juno.coordinator.api.ApiGate}.
 */
package ml.juno.coordinator.security;
