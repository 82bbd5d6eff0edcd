#!/bin/bash
# kafka-run-class.sh CLASS ARGS...: as the official script, minus the JMX and GC-log options.
set -euo pipefail
class="$1"; shift
# shellcheck disable=SC2086 # KAFKA_*_OPTS are lists of JVM options
exec java ${KAFKA_HEAP_OPTS:--Xmx256m} ${KAFKA_JVM_PERFORMANCE_OPTS:--XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true} \
  ${KAFKA_LOG4J_OPTS:--Dlog4j2.configurationFile=/opt/kafka/config/log4j2.properties} ${KAFKA_OPTS:-} \
  -cp '/opt/kafka/libs/*' "$class" "$@"
