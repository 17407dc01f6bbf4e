/**
 * What both Quarkus apps do with their process: {@link ml.juno.model.process.ParentWatch} ends a child of {@code juno
 * cluster} with its parent. Depends on Quarkus' runtime only.
 */
package ml.juno.model.process;
