#!/bin/sh
# The juno command line inside the coordinator image (the repository's ./juno without the build step).
# Server commands start the packaged coordinator as a child JVM with the engine's flags and stop it on SIGTERM.
set -eu
HOME_DIR=/opt/juno
APP="$HOME_DIR/coordinator-service/target/quarkus-app"
exec java --add-modules=jdk.incubator.vector --enable-native-access=ALL-UNNAMED -XX:LoopUnrollLimit=300 -XX:+UseSerialGC \
  ${JAVA_OPTS:-} -Djuno.home="$HOME_DIR" -cp "$APP/app/*:$APP/lib/main/*:$APP/lib/boot/*" ml.juno.cli.Juno "$@"
