#!/bin/bash
# The official apache/kafka image's environment contract: every KAFKA_* variable (bar the JVM/log4j option
# variables) becomes a server.properties line, with `___` → `-`, `__` → `_`, `_` → `.` and the name lower-cased
# (KAFKA_NODE_ID=1 → node.id=1); CLUSTER_ID names the cluster the storage is formatted for. Without any
# KAFKA_* setting the broker runs as a single KRaft broker+controller on localhost:9092, as the official one.
set -euo pipefail
props=/opt/kafka/config/server.properties
: > "$props"
configured=0
while IFS='=' read -r name value; do
  case "$name" in
    KAFKA_VERSION | KAFKA_HEAP_OPTS | KAFKA_OPTS | KAFKA_LOG4J_OPTS | KAFKA_JMX_OPTS | KAFKA_JVM_PERFORMANCE_OPTS | KAFKA_GC_LOG_OPTS | \
      KAFKA_JMX_PORT | KAFKA_JMX_HOSTNAME | KAFKA_LOG4J_ROOT_LOGLEVEL | KAFKA_LOG4J_LOGGERS | KAFKA_TOOLS_LOG4J_LOGLEVEL) continue ;;
    KAFKA_*) ;;
    *) continue ;;
  esac
  key="${name#KAFKA_}"
  key="${key//___/-}"
  key="${key//__/@}"
  key="${key//_/.}"
  key="${key//@/_}"
  printf '%s=%s\n' "${key,,}" "$value" >> "$props"
  configured=1
done < <(env)
if [ "$configured" = 0 ]; then
  cat > "$props" <<'PROPS'
node.id=1
process.roles=broker,controller
controller.quorum.voters=1@localhost:9093
listeners=PLAINTEXT://:9092,CONTROLLER://:9093
advertised.listeners=PLAINTEXT://localhost:9092
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
PROPS
fi
grep -q '^log\.dirs=' "$props" || echo 'log.dirs=/tmp/kraft-combined-logs' >> "$props"
# Short-lived tool JVM: small heap, C1 only, so formatting costs about a second.
KAFKA_HEAP_OPTS=-Xmx128m KAFKA_JVM_PERFORMANCE_OPTS='-XX:+UseSerialGC -XX:TieredStopAtLevel=1' \
  /opt/kafka/bin/kafka-storage.sh format --cluster-id "${CLUSTER_ID:-5L6g3nShT-eMCtK--X86sw}" --config "$props" --ignore-formatted >/dev/null
exec /opt/kafka/bin/kafka-server-start.sh "$props"
