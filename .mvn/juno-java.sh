# Sourced by ./juno and ./mvnw: point JAVA_HOME at a Java 25 JDK.
# Keeps JAVA_HOME when it already is Java 25; otherwise tries the usual install folders.
# Sets JUNO_JAVA_OK=1 when a Java 25 was found.
juno_java_major() { "$1" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p' | head -n 1; }
juno_find_java() {
  local home
  for home in "${JAVA_HOME:-}" /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/temurin-25-jdk-arm64 /usr/lib/jvm/temurin-25-jdk \
              /usr/lib/jvm/*25* /opt/java/openjdk /Library/Java/JavaVirtualMachines/temurin-25.jdk/Contents/Home; do
    if [ -n "$home" ] && [ -x "$home/bin/java" ] && [ "$(juno_java_major "$home/bin/java")" = "25" ]; then
      echo "$home"
      return 0
    fi
  done
  return 1
}
if JUNO_FOUND_JAVA="$(juno_find_java)"; then
  JAVA_HOME="$JUNO_FOUND_JAVA"
  export JAVA_HOME
  JUNO_JAVA_OK=1
else
  JUNO_JAVA_OK=0
fi
unset JUNO_FOUND_JAVA
