# Juno node image: the packaged node app (node-service/target/quarkus-app) on a Temurin 25 JRE.
# Build the apps first (./mvnw -B -DskipTests package), then from the repository root:
#   docker build -f deploy/docker/node.Dockerfile -t juno-node .
# One JVM, PID 1, so docker stop's SIGTERM reaches Quarkus directly. Settings come from the environment:
#   QUARKUS_HTTP_PORT (gRPC + health + metrics on one port, default 19092), JUNO_NODE_ID, JAVA_OPTS.
FROM eclipse-temurin:25-jre-noble

# curl for the compose health check (GET /q/health/ready)
# user juno has the fixed uid/gid 10001: the Kubernetes manifests run as it (runAsUser, fsGroup)
RUN apt-get update \
 && apt-get install -y --no-install-recommends curl \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 juno && useradd --system --uid 10001 --gid juno --home-dir /opt/juno --shell /usr/sbin/nologin juno

# Quarkus fast-jar layout: lib/ changes least, so it is its own layer
COPY --chown=root:root node-service/target/quarkus-app/lib/ /opt/juno/node/lib/
COPY --chown=root:root node-service/target/quarkus-app/*.jar /opt/juno/node/
COPY --chown=root:root node-service/target/quarkus-app/app/ /opt/juno/node/app/
COPY --chown=root:root node-service/target/quarkus-app/quarkus/ /opt/juno/node/quarkus/

ENV QUARKUS_HTTP_PORT=19092 \
    QUARKUS_HTTP_HOST=0.0.0.0 \
    JUNO_NODE_MODELS_DIR=/models \
    JUNO_NODE_ID=node \
    JAVA_OPTS=""
USER juno
WORKDIR /opt/juno
EXPOSE 19092
# The engine needs the Vector API incubator module and native access (FFM); see docs/deploy.md.
ENTRYPOINT ["/bin/sh", "-c", "exec java --add-modules=jdk.incubator.vector --enable-native-access=ALL-UNNAMED -XX:LoopUnrollLimit=300 -XX:+UseParallelGC $JAVA_OPTS -jar /opt/juno/node/quarkus-run.jar"]
