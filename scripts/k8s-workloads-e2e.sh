#!/usr/bin/env bash
# squeeze's workloads on a real single-node cluster (scripts/k8s-cluster.sh) against a Kafka inside it, from
# k8s/overlays/local-kafka. It needs the cached Kubernetes build (scripts/k8s-binaries.sh), root, a cgroup v1
# hierarchy and the Docker engine.
#   1. the images: apache/kafka (scripts/build-images.sh) and squeeze:0.1.0 (the Dockerfile), built on the Docker
#      engine and imported into the cluster's containerd (the engine is stopped again only if this script started it);
#   2. `kubectl apply -k` of the overlay: Kafka's StatefulSet and squeeze's producer, copier and consumer Ready
#      under the restricted Pod Security Standard, the records flowing into every destination topic; beside them an
#      exactly-once copier StatefulSet (squeeze-copier-eos, see eos_copier); the PodDisruptionBudgets and HPAs are
#      accepted by the API server, but the cluster runs no metrics-server, so no HPA scales anything: the steps
#      below scale by hand;
#   3. the copier StatefulSet scaled from 1 to 2 and the consumer Deployment from 1 to 3: every pod holds partitions;
#   4. the Kafka pod and a copier pod deleted while records flow: both come back Ready and the copy goes on;
#   5. `kubectl rollout restart` of the producer, and the exactly-once copier's pod deleted, while records flow;
#   6. the producer stopped (a bounded count): every producer pod's SIGTERM summary says no record failed, the
#      source holds exactly the records they acknowledged, every source record is in every destination
#      (at-least-once duplicates counted and allowed; the exactly-once destinations, read read_committed, hold each
#      record once), and the consumers, together, read them all;
#   7. the node-logs DaemonSet (k8s/overlays/node-logs) ships the lines a pod prints, with the pod's headers.
# Prints the figures it measured (records, seconds) and its total seconds. Exits non-zero on the first check that
# fails; the cluster goes down whatever happened.
#   SQUEEZE_K8S_RATE        producer records/s (default 200)
#   SQUEEZE_K8S_RUN_S       seconds of traffic before each step (default 30)
#   SQUEEZE_K8S_BUILD=0     no build: import the image tarballs the last run saved
#   SQUEEZE_K8S_KEEP=1      leave the cluster up when a check fails, to look at it (then k8s-cluster.sh down)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CLUSTER="$ROOT/scripts/k8s-cluster.sh"
STATE="${SQUEEZE_K8S_STATE:-/var/lib/squeeze-k8s}"
IMAGES="${SQUEEZE_IMAGE_CACHE:-/var/cache/squeeze}/k8s-images"
RATE="${SQUEEZE_K8S_RATE:-200}"
RUN_S="${SQUEEZE_K8S_RUN_S:-30}"
SQUEEZE_IMAGE=squeeze:0.1.0
# A fixed address in k8s-cluster.sh's service range: the cluster has no DNS, so squeeze's pods (and this script,
# from the host) bootstrap from the Service's cluster IP instead of kafka-bootstrap.kafka.svc.cluster.local.
BOOTSTRAP_IP=10.0.0.92
BOOTSTRAP="$BOOTSTRAP_IP:9092"
SOURCE=http-logs
# The exactly-once copier's targets, and the destinations its --destination template names for them.
EOS_TARGETS=lz4,zstd:3
EOS_DESTINATIONS=http-logs.eos.lz4-1,http-logs.eos.zstd-3
# The node-logs DaemonSet's namespace (hostPath volumes need the privileged Pod Security level) and topic.
NODE_LOGS_NS=squeeze-node-logs
NODE_LOGS_TOPIC=node-logs
STARTED=$SECONDS
# Each producer pod's log, streamed from its start (kubectl logs -f) so that its SIGTERM summary outlives the pod.
WORK="$(mktemp -d)"
declare -A FOLLOWER=()

log() { echo "k8s-workloads-e2e: $*" >&2; }
fail() {
  log "FAILED: $*"
  exit 1
}
since() { echo $((SECONDS - $1)); }

# ---------------------------------------------------------------- images
# The Docker engine builds; the tarballs it saves are kept, named by image ID, so an unchanged image is neither
# saved nor imported again.
save_image() { # REF
  local id out
  id="$(docker image inspect --format '{{.Id}}' "$1")"
  out="$IMAGES/$(tr '/:' '__' <<<"$1")-${id#sha256:}.tar"
  if [ ! -s "$out" ]; then
    rm -f "$IMAGES/$(tr '/:' '__' <<<"$1")"-*.tar
    docker save "$1" -o "$out.tmp"
    mv "$out.tmp" "$out"
  fi
  echo "$out"
}

build_images() {
  local started=$SECONDS kafka
  if [ "${SQUEEZE_K8S_BUILD:-1}" = 0 ]; then
    TARS=("$IMAGES"/apache_kafka_*.tar "$IMAGES"/"$(tr '/:' '__' <<<"$SQUEEZE_IMAGE")"-*.tar)
    [ -s "${TARS[0]}" ] && [ -s "${TARS[1]}" ] || fail "SQUEEZE_K8S_BUILD=0: no saved images in $IMAGES"
    return 0
  fi
  mkdir -p "$IMAGES"
  # An engine that already answers (scripts/test.sh starts one before the suite) is someone else's to stop:
  # docker-engine.sh stop would stop it too, since it stops whatever its own start began.
  local engine_was_up=0
  timeout 10 docker version --format '{{.Server.Version}}' >/dev/null 2>&1 && engine_was_up=1
  bash "$ROOT/scripts/docker-engine.sh" start
  [ "$engine_was_up" = 1 ] || trap 'bash "$ROOT/scripts/docker-engine.sh" stop' EXIT
  bash "$ROOT/scripts/build-images.sh"
  kafka="apache/kafka:$(sed -n 's:.*<kafka\.version>\(.*\)</kafka\.version>.*:\1:p' "$ROOT/kafka/pom.xml" | head -n1)"
  # The engine forwards no container traffic off the machine: npm ci reaches the registry on the host's network.
  DOCKER_BUILDKIT=0 nice -n 10 docker build --quiet --network host -t "$SQUEEZE_IMAGE" "$ROOT" >/dev/null
  TARS=("$(save_image "$kafka")" "$(save_image "$SQUEEZE_IMAGE")")
  if [ "$engine_was_up" = 0 ]; then
    bash "$ROOT/scripts/docker-engine.sh" stop
    trap - EXIT
  fi
  log "images built and saved in $(since "$started") s"
}

# ---------------------------------------------------------------- helpers
# Sums a metric (all label sets, or those matching FILTER) on one pod's /metrics.
metric() { # NAMESPACE POD NAME [FILTER]
  local ip
  ip="$(kubectl -n "$1" get pod "$2" -o jsonpath='{.status.podIP}')"
  curl -fsS --max-time 5 "http://$ip:9464/metrics" 2>/dev/null |
    awk -v name="$3" -v filter="${4:-}" '
      $1 ~ "^" name "([{]|$)" && (filter == "" || index($1, filter)) { sum += $NF; seen = 1 }
      END { if (seen) printf "%d\n", sum; else print "none" }'
}

# Sums a metric over every pod of a component.
component_metric() { # COMPONENT NAME [FILTER]
  local pod n total=0 seen=0
  for pod in $(pods_of squeeze "$1"); do
    n="$(metric squeeze "$pod" "$2" "${3:-}")"
    [ "$n" = none ] && continue
    total=$((total + n))
    seen=1
  done
  [ "$seen" = 1 ] && echo "$total" || echo none
}

pods_of() { # NAMESPACE COMPONENT
  kubectl -n "$1" get pods -l "app.kubernetes.io/component=$2" -o jsonpath='{.items[*].metadata.name}'
}

# Waits until COMMAND succeeds, at most SECONDS.
until_true() { # SECONDS WHAT COMMAND...
  local limit="$1" what="$2" deadline=$((SECONDS + $1))
  shift 2
  until "$@"; do
    [ $SECONDS -lt $deadline ] || fail "$what: not within $limit s"
    sleep 2
  done
}

destinations() {
  kubectl -n squeeze get configmap squeeze-config -o jsonpath='{.data.DESTINATION_TOPICS}'
}

source_partitions() {
  kubectl -n squeeze get configmap squeeze-config -o jsonpath='{.data.SOURCE_PARTITIONS}'
}

copy_check() {
  node "$ROOT/dist/test/k8s/copy-check.js" --brokers "$BOOTSTRAP" --source "$SOURCE" \
    --destinations "$(destinations),$EOS_DESTINATIONS"
}

# ---------------------------------------------------------------- steps
# The broker's data outlives its pod on a hostPath PersistentVolume that the StatefulSet's claim binds to (this
# cluster has no storage provisioner); k8s-cluster.sh down removes it with the cluster's state.
kafka_volume() {
  local dir="$STATE/volumes/kafka-data-0"
  rm -rf "$dir"
  mkdir -p "$dir"
  chown 1000:1000 "$dir"
  kubectl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolume
metadata: {name: squeeze-e2e-kafka-data-0}
spec:
  capacity: {storage: 5Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  claimRef: {namespace: kafka, name: data-kafka-0}
  hostPath: {path: "$dir", type: Directory}
EOF
}

apply_overlay() {
  local started=$SECONDS dir rel
  dir="$(mktemp -d)"
  rel="$(realpath --relative-to="$dir" "$ROOT/k8s/overlays/local-kafka")"
  cat >"$dir/kustomization.yaml" <<EOF
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - $rel
patches:
  - target: {kind: Service, name: kafka-bootstrap}
    patch: |-
      - op: add
        path: /spec/clusterIP
        value: $BOOTSTRAP_IP
  - target: {kind: ConfigMap, name: squeeze-config}
    patch: |-
      - op: replace
        path: /data/KAFKA_BROKERS
        value: "$BOOTSTRAP"
      - op: replace
        path: /data/PRODUCER_RATE
        value: "$RATE"
EOF
  kubectl apply -k "$dir"
  rm -rf "$dir"
  kubectl -n kafka rollout status statefulset/kafka --timeout=300s
  kubectl -n squeeze rollout status deployment/squeeze-producer --timeout=300s
  kubectl -n squeeze rollout status statefulset/squeeze-copier --timeout=300s
  kubectl -n squeeze rollout status deployment/squeeze-consumer --timeout=300s
  eos_copier
  kubectl get pods -A -o wide
  log "2. applied; Kafka, producer, copier, exactly-once copier and consumer Ready in $(since "$started") s \
(restricted Pod Security); PodDisruptionBudgets $(kubectl -n squeeze get pdb -o name | wc -l) and HPAs \
$(kubectl -n squeeze get hpa -o name | wc -l) accepted (no metrics-server: the HPAs scale nothing)"
  follow_producer "$(pods_of squeeze producer)"
}

# The exactly-once copier is a second StatefulSet beside the overlay's, not the overlay's copier switched over:
# the overlay's at-least-once copier is what users run by default and keeps its own check (duplicates allowed),
# while this one, with --exactly-once, its own group and destinations ({source}.eos.{target}) and two codec
# targets (little CPU), copies the same source through the same broker restart and must hold each record once.
# It is the overlay's copier with those arguments, so it runs under the same pod and security settings.
eos_copier() {
  kubectl -n squeeze get statefulset squeeze-copier -o json | node -e '
    const s = JSON.parse(require("node:fs").readFileSync(0, "utf8"))
    const [name, component, targets] = process.argv.slice(1)
    s.metadata = { name, namespace: s.metadata.namespace,
      labels: { ...s.metadata.labels, "app.kubernetes.io/component": component } }
    delete s.status
    s.spec.replicas = 1
    s.spec.serviceName = name
    s.spec.selector.matchLabels["app.kubernetes.io/component"] = component
    s.spec.template.metadata.labels["app.kubernetes.io/component"] = component
    const args = s.spec.template.spec.containers[0].args
    args[args.indexOf("--targets") + 1] = targets
    args.push("--exactly-once", "--group", name, "--destination", "{source}.eos.{target}")
    process.stdout.write(JSON.stringify(s))
  ' squeeze-copier-eos copier-eos "$EOS_TARGETS" | kubectl apply -f -
  kubectl -n squeeze rollout status statefulset/squeeze-copier-eos --timeout=300s
}

# Streams POD's log, from its start, into $WORK/POD.log until its container ends.
follow_producer() { # POD
  kubectl -n squeeze logs -f "$1" >"$WORK/$1.log" 2>&1 &
  FOLLOWER[$1]=$!
  grep -qx "$1" "$WORK/producers" 2>/dev/null || echo "$1" >>"$WORK/producers"
}

running() { [ -e "/proc/$1" ] && ! grep -q '^[0-9]* ([^)]*) Z' "/proc/$1/stat" 2>/dev/null; }

# True once POD's stream has ended with its summary in it. A stream cut short while the pod still runs (the API
# server's or the kubelet's connection) is started again, from the log's start; a pod gone without one fails.
summary_streamed() { # POD
  running "${FOLLOWER[$1]}" && return 1
  [ -n "$(producer_outcome "$1")" ] && return 0
  kubectl -n squeeze get pod "$1" >/dev/null 2>&1 || fail "producer $1 ended without its summary in its log"
  follow_producer "$1"
  return 1
}

every_destination_read() {
  local topic n
  for topic in ${1//,/ }; do
    n="$(component_metric consumer squeeze_records_consumed_total "topic=\"$topic\"")"
    [ "$n" != none ] && [ "$n" -gt 0 ] || return 1
  done
}

records_flow() {
  local started=$SECONDS
  until_true 300 "records in every destination" every_destination_read "$(destinations)"
  log "2. records flowing: the consumer read from all $(destinations | tr ',' '\n' | grep -c .) destinations \
$(since "$started") s after Ready"
}

copiers_share() {
  local pod n total=0
  for pod in squeeze-copier-0 squeeze-copier-1; do
    n="$(metric squeeze "$pod" squeeze_copier_assigned_partitions)"
    [ "$n" != none ] && [ "$n" -gt 0 ] || return 1
    total=$((total + n))
  done
  [ "$total" -eq "$(source_partitions)" ]
}

scale_copier() {
  local started=$SECONDS
  kubectl -n squeeze scale statefulset/squeeze-copier --replicas=2
  kubectl -n squeeze rollout status statefulset/squeeze-copier --timeout=300s
  until_true 180 "both copiers holding partitions" copiers_share
  log "3. copier scaled 1 -> 2 in $(since "$started") s: squeeze-copier-0 holds \
$(metric squeeze squeeze-copier-0 squeeze_copier_assigned_partitions), squeeze-copier-1 holds \
$(metric squeeze squeeze-copier-1 squeeze_copier_assigned_partitions) source partitions"
}

# Every consumer holds some of the destinations' partitions, and together all of them.
consumers_share() {
  local pod n total=0 partitions topics
  partitions="$(source_partitions)"
  topics="$(destinations | tr ',' '\n' | grep -c .)"
  for pod in $(pods_of squeeze consumer); do
    n="$(metric squeeze "$pod" squeeze_consumer_assigned_partitions)"
    [ "$n" != none ] && [ "$n" -gt 0 ] || return 1
    total=$((total + n))
  done
  [ "$total" -eq $((partitions * topics)) ]
}

scale_consumer() {
  local started=$SECONDS pod shares=""
  kubectl -n squeeze scale deployment/squeeze-consumer --replicas=3
  kubectl -n squeeze rollout status deployment/squeeze-consumer --timeout=300s
  until_true 180 "three consumers holding partitions" consumers_share
  for pod in $(pods_of squeeze consumer); do
    shares+=" $(metric squeeze "$pod" squeeze_consumer_assigned_partitions)"
  done
  log "3. consumer scaled 1 -> 3 in $(since "$started") s: the pods hold$shares of the destinations' partitions"
}

uid_of() { kubectl -n "$1" get pod "$2" -o jsonpath='{.metadata.uid}' 2>/dev/null || true; }

replaced_and_ready() { # NAMESPACE POD OLD-UID
  local uid
  uid="$(uid_of "$1" "$2")"
  [ -n "$uid" ] && [ "$uid" != "$3" ] &&
    [ "$(kubectl -n "$1" get pod "$2" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]
}

restart_pods() {
  local started=$SECONDS kafka_uid kafka_ip copier_uid produced_before
  produced_before="$(metric squeeze "$(pods_of squeeze producer)" squeeze_records_produced_total)"
  kafka_uid="$(uid_of kafka kafka-0)"
  kafka_ip="$(kubectl -n kafka get pod kafka-0 -o jsonpath='{.status.podIP}')"
  copier_uid="$(uid_of squeeze squeeze-copier-1)"
  kubectl -n kafka delete pod kafka-0 --wait=false
  kubectl -n squeeze delete pod squeeze-copier-1 --wait=false
  until_true 300 "kafka-0 replaced and Ready" replaced_and_ready kafka kafka-0 "$kafka_uid"
  # The broker's address changes with its pod: clients find the new one through the bootstrap Service's cluster IP.
  log "4. kafka-0 deleted: replaced and Ready in $(since "$started") s, pod IP $kafka_ip -> \
$(kubectl -n kafka get pod kafka-0 -o jsonpath='{.status.podIP}')"
  until_true 300 "squeeze-copier-1 replaced and Ready" replaced_and_ready squeeze squeeze-copier-1 "$copier_uid"
  log "4. squeeze-copier-1 deleted: replaced and Ready in $(since "$started") s"
  until_true 300 "both copiers holding partitions after the restarts" copiers_share
  until_true 300 "the producer producing after the restarts" producing_past "$produced_before"
  log "4. copiers share the partitions again and the producer goes on, $(since "$started") s after the deletions"
}

producing_past() { # COUNT [POD]
  local n
  n="$(metric squeeze "${2:-$(pods_of squeeze producer)}" squeeze_records_produced_total)"
  [ "$n" != none ] && [ "$n" -gt "$1" ]
}

eos_copier_holds_all() {
  [ "$(metric squeeze squeeze-copier-eos-0 squeeze_copier_assigned_partitions)" = \
    "$(source_partitions)" ]
}

# The producer pod other than OLD, once the rollout created it.
new_producer() { # OLD
  local pod
  for pod in $(pods_of squeeze producer); do
    [ "$pod" != "$1" ] && echo "$pod" && return 0
  done
  return 1
}

# The end of SIGTERM's summary in a producer pod's streamed log: "accepted N: A acknowledged, F failed" (and
# ", U without an outcome yet" if some had none). The summary is wrapped to the terminal width: joined first.
producer_outcome() { # POD
  tr '\n' ' ' <"$WORK/$1.log" | tr -s ' ' |
    grep -o 'accepted [0-9]*: [0-9]* acknowledged, [0-9]* failed\(, [0-9]* without an outcome yet\)\?' | tail -n1 || true
}

# A rolling restart of the producer and, meanwhile, the exactly-once copier's pod deleted.
restart_producer() {
  local started=$SECONDS old new eos_uid
  old="$(pods_of squeeze producer)"
  eos_uid="$(uid_of squeeze squeeze-copier-eos-0)"
  # A restarted container's earlier run ended without its summary reaching the stream: its records are unaccounted.
  [ "$(restarts_of "$old")" = 0 ] || fail "producer $old restarted $(restarts_of "$old") times"
  kubectl -n squeeze rollout restart deployment/squeeze-producer
  kubectl -n squeeze delete pod squeeze-copier-eos-0 --wait=false
  kubectl -n squeeze rollout status deployment/squeeze-producer --timeout=300s
  new="$(new_producer "$old")" || fail "no new producer pod after the rollout"
  follow_producer "$new"
  until_true 150 "the replaced producer $old's summary" summary_streamed "$old"
  log "5. producer rolled $old -> $new in $(since "$started") s; $old on SIGTERM: $(producer_outcome "$old")"
  until_true 120 "the new producer producing" producing_past 0 "$new"
  until_true 300 "squeeze-copier-eos-0 replaced and Ready" replaced_and_ready squeeze squeeze-copier-eos-0 "$eos_uid"
  until_true 180 "squeeze-copier-eos-0 holding every source partition" eos_copier_holds_all
  log "5. squeeze-copier-eos-0 deleted: replaced, Ready and holding every source partition in $(since "$started") s"
}

restarts_of() { kubectl -n squeeze get pod "$1" -o jsonpath='{.status.containerStatuses[0].restartCount}'; }

# The bounded count: the producer stops (SIGTERM flushes what it accepted), then the copies must end whole.
stop_producer() {
  local pod restarts
  pod="$(pods_of squeeze producer)"
  restarts="$(restarts_of "$pod")"
  log "6. producer before stopping: produced $(metric squeeze "$pod" squeeze_records_produced_total), restarts \
$restarts"
  [ "$restarts" = 0 ] || fail "producer $pod restarted $restarts times"
  kubectl -n squeeze scale deployment/squeeze-producer --replicas=0
  until_true 150 "the stopped producer $pod's summary" summary_streamed "$pod"
  kubectl -n squeeze wait --for=delete pod/"$pod" --timeout=120s
  log "6. producer $pod on SIGTERM: $(producer_outcome "$pod")"
}

# Every producer pod's summary: nothing failed or left without an outcome, and the source holds exactly the
# records they acknowledged (the producer is idempotent: a retried batch is not stored twice).
producers_accounted() {
  local pod line acked=0 source
  for pod in $(cat "$WORK/producers"); do
    line="$(producer_outcome "$pod")"
    [[ "$line" =~ ^accepted\ [0-9]+:\ ([0-9]+)\ acknowledged,\ ([0-9]+)\ failed$ ]] ||
      fail "producer $pod: summary '$line' is not 'accepted N: A acknowledged, 0 failed'"
    [ "${BASH_REMATCH[2]}" = 0 ] || fail "producer $pod: ${BASH_REMATCH[2]} records failed"
    acked=$((acked + BASH_REMATCH[1]))
  done
  source="$(node -e 'console.log(JSON.parse(process.argv[1]).source.records)' "$RESULT")"
  [ "$acked" = "$source" ] || fail "the producers acknowledged $acked records, the source holds $source"
  log "6. $(wc -l <"$WORK/producers") producer pods acknowledged $acked records, 0 failed; the source holds $source"
}

copies_whole() {
  local started=$SECONDS result deadline=$((SECONDS + 300))
  # The copiers may still be copying the last records: a loss only counts once they had time to catch up.
  until result="$(copy_check)"; do
    [ $SECONDS -lt $deadline ] || break
    sleep 10
  done
  echo "$result" >&2
  RESULT="$result"
  node -e '
    const r = JSON.parse(process.argv[1])
    const once = new Set(process.argv[2].split(","))
    for (const d of r.destinations)
      console.error(`k8s-workloads-e2e: 6. ${d.topic}${once.has(d.topic) ? " (exactly-once)" : ""}: ${d.records}` +
        ` records for ${r.source.records} source records: lost ${d.lost}, duplicated ${d.duplicated},` +
        ` foreign ${d.foreign}`)
    if (r.source.records === 0 || r.destinations.some((d) => d.lost > 0 || d.foreign > 0)) process.exit(1)
    if (r.destinations.some((d) => once.has(d.topic) && d.duplicated > 0)) process.exit(3)
  ' "$result" "$EOS_DESTINATIONS" || case $? in
    3) fail "an exactly-once destination holds a record twice" ;;
    *) fail "a destination does not hold every source record" ;;
  esac
  log "6. every one of $(node -e 'console.log(JSON.parse(process.argv[1]).source.records)' "$RESULT") source records \
is in every destination, each exactly once in the exactly-once ones, $(since "$started") s after the producer stopped"
}

# A destination's record count, as copy-check found it.
records_held() { # TOPIC
  node -e 'console.log(JSON.parse(process.argv[1]).destinations.find((d) => d.topic === process.argv[2]).records)' \
    "$RESULT" "$1"
}

consumer_read_all() {
  local pod topic held read restarts
  for pod in $(pods_of squeeze consumer); do
    restarts="$(kubectl -n squeeze get pod "$pod" -o jsonpath='{.status.containerStatuses[0].restartCount}')"
    [ "$restarts" = 0 ] || fail "consumer $pod restarted $restarts times: its counters began again"
  done
  for topic in $(destinations | tr ',' ' '); do
    held="$(records_held "$topic")"
    read="$(component_metric consumer squeeze_records_consumed_total "topic=\"$topic\"")"
    [ "$read" != none ] && [ "$read" -ge "$held" ] || return 1
  done
}

consumer_check() {
  local started=$SECONDS topic
  until_true 300 "the consumers reading every destination record" consumer_read_all
  # More read than held: a rebalance handed a partition over before its last commit, and it was read again.
  for topic in $(destinations | tr ',' ' '); do
    log "6. the consumers read $(component_metric consumer squeeze_records_consumed_total "topic=\"$topic\"") \
records of $topic, which holds $(records_held "$topic")"
  done
  log "6. the consumers read every destination record, $(since "$started") s after the copies were whole"
}

# The node-logs overlay as users apply it, adapted to this cluster by a kustomization on top: a namespace of its
# own at the privileged Pod Security level (the hostPath volumes are refused below it), this cluster's Kafka over
# PLAINTEXT, a topic of its own (the copiers must not copy node logs into the source's destinations), its read
# positions under the cluster's state (down removes them), and the DaemonSet only: the overlay's copier and
# consumer would copy and read the node logs besides.
node_logs_overlay() {
  local dir rel kind name
  dir="$(mktemp -d)"
  rel="$(realpath --relative-to="$dir" "$ROOT/k8s/overlays/node-logs")"
  cat >"$dir/kustomization.yaml" <<EOF
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: $NODE_LOGS_NS
resources:
  - $rel
patches:
  - target: {kind: ConfigMap, name: squeeze-config}
    patch: |-
      - {op: replace, path: /data/KAFKA_BROKERS, value: "$BOOTSTRAP"}
      - {op: replace, path: /data/KAFKA_SECURITY_PROTOCOL, value: PLAINTEXT}
      - {op: replace, path: /data/KAFKA_SASL_MECHANISM, value: ""}
      - {op: replace, path: /data/KAFKA_SASL_USERNAME, value: ""}
      - {op: replace, path: /data/SOURCE_TOPIC, value: $NODE_LOGS_TOPIC}
  - target: {kind: DaemonSet, name: squeeze-node-logs}
    patch: |-
      - {op: test, path: /spec/template/spec/volumes/1/name, value: state}
      - {op: replace, path: /spec/template/spec/volumes/1/hostPath/path, value: "$STATE/volumes/node-logs-state"}
EOF
  for kind in Deployment/squeeze-producer StatefulSet/squeeze-copier Deployment/squeeze-consumer \
    HorizontalPodAutoscaler/squeeze-copier HorizontalPodAutoscaler/squeeze-consumer; do
    name="${kind#*/}"
    kind="${kind%/*}"
    cat >>"$dir/kustomization.yaml" <<EOF
  - target: {kind: $kind, name: $name}
    patch: |-
      \$patch: delete
      kind: $kind
      metadata: {name: $name}
EOF
  done
  kubectl kustomize "$dir"
  rm -rf "$dir"
}

# Every one of the printer's lines, each once, with the headers of its pod.
node_lines_arrived() { # MARKER POD
  node "$ROOT/dist/test/k8s/topic-lines.js" --brokers "$BOOTSTRAP" --topic "$NODE_LOGS_TOPIC" --contains "$1" \
    >"$WORK/node-lines.json" 2>/dev/null || return 1
  node -e '
    const [file, marker, namespace, pod] = process.argv.slice(1)
    const lines = require("node:fs").readFileSync(file, "utf8").split("\n").filter(Boolean).map(JSON.parse)
    const values = new Set(lines.map((l) => l.value))
    const headed = lines.every((l) => l.headers["squeeze.k8s.namespace"] === namespace &&
      l.headers["squeeze.k8s.pod"] === pod && l.headers["squeeze.k8s.container"] === "printer")
    for (let i = 1; i <= 20; i++) if (!values.has(`${marker} line ${i}`)) process.exit(1)
    if (lines.length !== 20 || !headed) { console.error(JSON.stringify(lines)); process.exit(2) }
  ' "$WORK/node-lines.json" "$1" "$NODE_LOGS_NS" "$2" || {
    [ $? = 2 ] && fail "node-logs: the printed lines arrived more than once or without the pod's headers"
    return 1
  }
}

node_logs() {
  local started=$SECONDS marker pod=squeeze-e2e-printer
  kubectl create namespace "$NODE_LOGS_NS"
  kubectl label namespace "$NODE_LOGS_NS" pod-security.kubernetes.io/enforce=privileged
  node_logs_overlay | kubectl apply -f -
  kubectl -n "$NODE_LOGS_NS" rollout status daemonset/squeeze-node-logs --timeout=300s
  marker="squeeze-e2e-node-logs-$RANDOM$RANDOM"
  kubectl apply -f - <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $pod, namespace: $NODE_LOGS_NS}
spec:
  restartPolicy: Never
  automountServiceAccountToken: false
  securityContext: {runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, seccompProfile: {type: RuntimeDefault}}
  containers:
    - name: printer
      image: $SQUEEZE_IMAGE
      imagePullPolicy: IfNotPresent
      command: [node, -e, "for (let i = 1; i <= 20; i++) console.log(process.argv[1] + ' line ' + i); setInterval(() => {}, 1e9)", "$marker"]
      securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}
EOF
  kubectl -n "$NODE_LOGS_NS" wait --for=condition=Ready pod/"$pod" --timeout=120s
  log "7. the kubelet writes the printer's log as (mode owner path): $(stat -c '%a %U:%G %n' /var/log/pods) and \
$(stat -c '%a %U:%G %n' /var/log/pods/"${NODE_LOGS_NS}_${pod}"_*/printer/*.log)"
  until_true 180 "the printer's 20 lines in topic $NODE_LOGS_TOPIC" node_lines_arrived "$marker" "$pod"
  log "7. node-logs DaemonSet: the printer's 20 lines in topic $NODE_LOGS_TOPIC, each once, with headers \
$(head -n1 "$WORK/node-lines.json" | node -e '
    const h = JSON.parse(require("node:fs").readFileSync(0, "utf8")).headers
    console.log(Object.entries(h).filter(([k]) => k.startsWith("squeeze.k8s.")).map(([k, v]) => `${k}=${v}`).join(" "))
  '), $(since "$started") s after the apply"
}

cleanup() {
  local status=$? pid
  for pid in "${FOLLOWER[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
  [ "$status" -ne 0 ] && [ "${SQUEEZE_K8S_KEEP:-}" = 1 ] || bash "$CLUSTER" down
}

# ---------------------------------------------------------------- main
[ "$(id -u)" -eq 0 ] || fail "needs root (the cluster, the Docker engine)"
source "$ROOT/scripts/node-lts.sh"
squeeze_use_node "$SQUEEZE_NODE_LTS"
[ -f "$ROOT/dist/test/k8s/topic-lines.js" ] || (cd "$ROOT" && npm run build)
build_images
bash "$CLUSTER" up
trap cleanup EXIT
# A test runner's interrupt or timeout ends the script through exit, so the cluster still goes down.
trap 'exit 130' INT
trap 'exit 143' TERM
eval "$(bash "$CLUSTER" env)"
bash "$CLUSTER" import "${TARS[@]}"
kafka_volume
apply_overlay
records_flow
sleep "$RUN_S"
scale_copier
scale_consumer
sleep "$RUN_S"
restart_pods
sleep "$RUN_S"
restart_producer
sleep "$RUN_S"
stop_producer
copies_whole
producers_accounted
consumer_check
node_logs
# A copier stops (and its pod restarts) when a destination does not take a batch within delivery.timeout.ms, as
# happens when the broker is away longer than that: the restarts say how the figures above came about.
log "container restarts: $(kubectl get pods -A --no-headers \
  -o custom-columns='POD:.metadata.name,RESTARTS:.status.containerStatuses[0].restartCount' |
  awk '{ printf "%s %s; ", $1, $2 }')"
log "passed in $(since "$STARTED") s (rate $RATE records/s, $RUN_S s between steps)"
