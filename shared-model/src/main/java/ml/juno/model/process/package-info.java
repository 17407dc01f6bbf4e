/**
 * What both Quarkus apps do with their process: {@link ml.juno.model.process.ParentWatch} ends a child of {@code juno
 * cluster}, {@code juno local} or {@code juno bench --nodes} with its parent. Depends on Quarkus' runtime only.
 */
package ml.juno.model.process;
