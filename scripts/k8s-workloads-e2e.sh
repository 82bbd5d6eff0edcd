#!/usr/bin/env bash
# squeeze's workloads on a real single-node cluster (scripts/k8s-cluster.sh) against a Kafka inside it, from
# k8s/overlays/local-kafka. Outside the test suite: it needs the cached Kubernetes build, root and the Docker engine.
#   1. the images: apache/kafka (scripts/build-images.sh) and squeeze:0.1.0 (the Dockerfile), built on the Docker
#      engine and imported into the cluster's containerd (the engine is stopped again if this script started it);
#   2. `kubectl apply -k` of the overlay: Kafka's StatefulSet and squeeze's producer, copier and consumer Ready
#      under the restricted Pod Security Standard, the records flowing into every destination topic;
#   3. the copier StatefulSet scaled from 1 to 2 and the consumer Deployment from 1 to 3: every pod holds partitions;
#   4. the Kafka pod and a copier pod deleted while records flow: both come back Ready and the copy goes on;
#   5. the producer stopped (a bounded count): every source record is in every destination (duplicates from
#      at-least-once redelivery counted and allowed, a lost or foreign record fails), and the consumers, together,
#      read them all.
# Prints the figures it measured (records, seconds). Exits non-zero on the first check that fails; the cluster
# goes down whatever happened.
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
STARTED=$SECONDS

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
  bash "$ROOT/scripts/docker-engine.sh" start
  trap 'bash "$ROOT/scripts/docker-engine.sh" stop' EXIT
  bash "$ROOT/scripts/build-images.sh"
  kafka="apache/kafka:$(sed -n 's:.*<kafka\.version>\(.*\)</kafka\.version>.*:\1:p' "$ROOT/kafka/pom.xml" | head -n1)"
  # The engine forwards no container traffic off the machine: npm ci reaches the registry on the host's network.
  DOCKER_BUILDKIT=0 nice -n 10 docker build --quiet --network host -t "$SQUEEZE_IMAGE" "$ROOT" >/dev/null
  TARS=("$(save_image "$kafka")" "$(save_image "$SQUEEZE_IMAGE")")
  bash "$ROOT/scripts/docker-engine.sh" stop
  trap - EXIT
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

copy_check() {
  node "$ROOT/dist/test/k8s/copy-check.js" --brokers "$BOOTSTRAP" --source "$SOURCE" --destinations "$(destinations)"
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
  kubectl get pods -A -o wide
  log "2. applied; Kafka, producer, copier and consumer Ready in $(since "$started") s (restricted Pod Security)"
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
  [ "$total" -eq "$(kubectl -n squeeze get configmap squeeze-config -o jsonpath='{.data.SOURCE_PARTITIONS}')" ]
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
  partitions="$(kubectl -n squeeze get configmap squeeze-config -o jsonpath='{.data.SOURCE_PARTITIONS}')"
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
  local started=$SECONDS kafka_uid copier_uid produced_before
  produced_before="$(metric squeeze "$(pods_of squeeze producer)" squeeze_records_produced_total)"
  kafka_uid="$(uid_of kafka kafka-0)"
  copier_uid="$(uid_of squeeze squeeze-copier-1)"
  kubectl -n kafka delete pod kafka-0 --wait=false
  kubectl -n squeeze delete pod squeeze-copier-1 --wait=false
  until_true 300 "kafka-0 replaced and Ready" replaced_and_ready kafka kafka-0 "$kafka_uid"
  log "4. kafka-0 deleted: replaced and Ready in $(since "$started") s"
  until_true 300 "squeeze-copier-1 replaced and Ready" replaced_and_ready squeeze squeeze-copier-1 "$copier_uid"
  log "4. squeeze-copier-1 deleted: replaced and Ready in $(since "$started") s"
  until_true 300 "both copiers holding partitions after the restarts" copiers_share
  until_true 300 "the producer producing after the restarts" producing_past "$produced_before"
  log "4. copiers share the partitions again and the producer goes on, $(since "$started") s after the deletions"
}

producing_past() {
  local n
  n="$(metric squeeze "$(pods_of squeeze producer)" squeeze_records_produced_total)"
  [ "$n" != none ] && [ "$n" -gt "$1" ]
}

# The bounded count: the producer stops (SIGTERM flushes what it accepted), then the copies must end whole.
stop_producer() {
  local pod
  pod="$(pods_of squeeze producer)"
  log "5. producer before stopping: produced $(metric squeeze "$pod" squeeze_records_produced_total), failed \
$(metric squeeze "$pod" squeeze_records_failed_total), restarts \
$(kubectl -n squeeze get pod "$pod" -o jsonpath='{.status.containerStatuses[0].restartCount}')"
  kubectl -n squeeze scale deployment/squeeze-producer --replicas=0
  kubectl -n squeeze wait --for=delete pod/"$pod" --timeout=120s
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
    for (const d of r.destinations)
      console.error(`k8s-workloads-e2e: 5. ${d.topic}: ${d.records} records for ${r.source.records} source records:` +
        ` lost ${d.lost}, duplicated ${d.duplicated}, foreign ${d.foreign}`)
    if (r.source.records === 0 || r.destinations.some((d) => d.lost > 0 || d.foreign > 0)) process.exit(1)
  ' "$result" || fail "a destination does not hold every source record"
  log "5. every one of $(node -e 'console.log(JSON.parse(process.argv[1]).source.records)' "$RESULT") source records \
is in every destination, $(since "$started") s after the producer stopped"
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
    log "5. the consumers read $(component_metric consumer squeeze_records_consumed_total "topic=\"$topic\"") \
records of $topic, which holds $(records_held "$topic")"
  done
  log "5. the consumers read every destination record, $(since "$started") s after the copies were whole"
}

# ---------------------------------------------------------------- main
[ "$(id -u)" -eq 0 ] || fail "needs root (the cluster, the Docker engine)"
source "$ROOT/scripts/node-lts.sh"
squeeze_use_node "$SQUEEZE_NODE_LTS"
[ -f "$ROOT/dist/test/k8s/copy-check.js" ] || (cd "$ROOT" && npm run build)
build_images
bash "$CLUSTER" up
trap 'status=$?; [ "$status" -ne 0 ] && [ "${SQUEEZE_K8S_KEEP:-}" = 1 ] || bash "$CLUSTER" down' EXIT
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
stop_producer
copies_whole
consumer_check
# A copier stops (and its pod restarts) when a destination does not take a batch within delivery.timeout.ms, as
# happens when the broker is away longer than that: the restarts say how the figures above came about.
log "container restarts: $(kubectl get pods -A --no-headers \
  -o custom-columns='POD:.metadata.name,RESTARTS:.status.containerStatuses[0].restartCount' |
  awk '{ printf "%s %s; ", $1, $2 }')"
log "passed in $(since "$STARTED") s (rate $RATE records/s, $RUN_S s between steps)"
