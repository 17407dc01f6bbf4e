/**
 * Mutual TLS between the coordinator and its nodes (framework-free): {@link ml.juno.coordinator.tls.ClusterCertificates}
 * makes a CA and the coordinator's and nodes' certificates ({@code juno certs}); {@link ml.juno.coordinator.tls.TlsDir}
 * names the files of a {@code --tls-dir} and turns them into the coordinator's gRPC credentials and a node's Quarkus
 * TLS settings.
 */
package ml.juno.coordinator.tls;
