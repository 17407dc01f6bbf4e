# Juno coordinator image: the packaged coordinator app (coordinator-service/target/quarkus-app), which also holds
# the juno command line, on a Temurin 25 JRE. Build the apps first (./mvnw -B -DskipTests package), then from the
# repository root:
#   docker build -f deploy/docker/coordinator.Dockerfile -t juno-coordinator .
# The entrypoint is the juno CLI (deploy/docker/juno-entrypoint.sh): the container's command is its arguments,
# e.g. "coordinator --nodes node1:19092,node2:19092 --model-path /models/model.gguf" or "local --model-path …".
FROM eclipse-temurin:25-jre-noble

# user juno has the fixed uid/gid 10001: the Kubernetes manifests run as it (runAsUser, fsGroup)
RUN apt-get update \
 && apt-get install -y --no-install-recommends curl \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 juno && useradd --system --uid 10001 --gid juno --home-dir /opt/juno --shell /usr/sbin/nologin juno \
 && mkdir -p /var/lib/juno/jfr && chown juno:juno /var/lib/juno/jfr

# The CLI finds the app under juno.home as in the repository: coordinator-service/target/quarkus-app
COPY --chown=root:root coordinator-service/target/quarkus-app/lib/ /opt/juno/coordinator-service/target/quarkus-app/lib/
COPY --chown=root:root coordinator-service/target/quarkus-app/*.jar /opt/juno/coordinator-service/target/quarkus-app/
COPY --chown=root:root coordinator-service/target/quarkus-app/app/ /opt/juno/coordinator-service/target/quarkus-app/app/
COPY --chown=root:root coordinator-service/target/quarkus-app/quarkus/ /opt/juno/coordinator-service/target/quarkus-app/quarkus/
COPY --chown=root:root deploy/docker/juno-entrypoint.sh /opt/juno/bin/juno

ENV JUNO_API_PORT=8080 \
    JAVA_OPTS=""
USER juno
WORKDIR /var/lib/juno
EXPOSE 8080
ENTRYPOINT ["/opt/juno/bin/juno"]
CMD ["--help"]
