#!/usr/bin/env bash
# End-to-end check on a real single-node cluster (scripts/k8s-cluster.sh), outside the test suite because a cold
# build of the Kubernetes binaries takes far longer than the suite may. Starts the cluster, then:
#   1. a Deployment on a locally built image (Debian's static busybox) becomes Ready under the `restricted` Pod
#      Security Standard, answers its readiness probe, and its Service's cluster IP answers through kube-proxy;
#   2. every resource of k8s/strimzi passes `kubectl apply --dry-run=server` against Strimzi's own CRDs
#      (scripts/strimzi-crds.sh) for each Strimzi version named in SQUEEZE_STRIMZI_VERSIONS;
# and stops the cluster whatever happened. Exits non-zero on the first check that fails. Before it starts the cluster,
# it leaves pid files as a run killed outright does (0.): `up` clears them rather than refusing, and stops no program
# whose pid they name.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CLUSTER="$ROOT/scripts/k8s-cluster.sh"
STRIMZI_VERSIONS="${SQUEEZE_STRIMZI_VERSIONS:-0.49.0 0.51.0}"

log() { echo "k8s-e2e: $*" >&2; }

smoke_image() {
  bash "$ROOT/scripts/ensure-apt.sh" busybox-static
  local version rootfs out
  version="$(dpkg-query -W -f='${Version}' busybox-static | tr -c 'A-Za-z0-9_.\n-' '_')"
  SMOKE_IMAGE="squeeze.local/busybox:$version"
  out="$(mktemp -d)"
  rootfs="$out/rootfs"
  mkdir -p "$rootfs/bin" "$rootfs/www"
  cp /bin/busybox "$rootfs/bin/busybox"
  echo "squeeze k8s smoke" >"$rootfs/www/index.html"
  bash "$CLUSTER" pack "$rootfs" "$SMOKE_IMAGE" "$out/image.tar" '{"Entrypoint":["/bin/busybox"],"User":"65534:65534"}'
  bash "$CLUSTER" import "$out/image.tar"
  rm -rf "$out"
}

smoke() {
  smoke_image
  kubectl apply -f - <<EOF
apiVersion: v1
kind: Namespace
metadata:
  name: squeeze-smoke
  labels:
    pod-security.kubernetes.io/enforce: restricted
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: squeeze-smoke}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      securityContext: {runAsNonRoot: true, runAsUser: 65534, seccompProfile: {type: RuntimeDefault}}
      containers:
        - name: web
          image: $SMOKE_IMAGE
          imagePullPolicy: Never
          args: [httpd, -f, -p, "8080", -h, /www]
          ports: [{containerPort: 8080}]
          readinessProbe: {httpGet: {path: /, port: 8080}, periodSeconds: 2}
          securityContext:
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
            capabilities: {drop: [ALL]}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: squeeze-smoke}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
EOF
  kubectl -n squeeze-smoke rollout status deployment/web --timeout=180s
  kubectl -n squeeze-smoke get pods -o wide
  local ip answer=""
  ip="$(kubectl -n squeeze-smoke get service web -o jsonpath='{.spec.clusterIP}')"
  for _ in $(seq 1 30); do
    answer="$(curl -fsS --max-time 2 "http://$ip/" 2>/dev/null || true)"
    [ -n "$answer" ] && break
    sleep 1
  done
  [ "$answer" = "squeeze k8s smoke" ] || { log "service $ip did not answer (got '$answer')"; return 1; }
  log "1. smoke Deployment Ready on $SMOKE_IMAGE; service $ip answered through kube-proxy"
  kubectl delete namespace squeeze-smoke --wait=false >/dev/null
}

# kubectl wait fails at once, not after its timeout, on a CRD the API server has not yet given a status.
crds_established() {
  local deadline=$((SECONDS + 60))
  until kubectl wait --for=condition=Established crd --selector=app=strimzi --timeout=10s >/dev/null 2>&1; do
    if [ $SECONDS -ge $deadline ]; then
      kubectl wait --for=condition=Established crd --selector=app=strimzi --timeout=1s
      return 1
    fi
    sleep 1
  done
}

strimzi() {
  local version crds
  kubectl create namespace squeeze --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  for version in $STRIMZI_VERSIONS; do
    crds="$(bash "$ROOT/scripts/strimzi-crds.sh" "$version")"
    # Server-side: the Kafka CRD is larger than the annotation client-side apply would add.
    kubectl apply --server-side -f "$crds" >/dev/null
    crds_established
    kubectl apply --dry-run=server -n squeeze -k "$ROOT/k8s/strimzi"
    log "2. k8s/strimzi accepted by the API server against Strimzi $version's CRDs"
    kubectl delete -f "$crds" --wait=true >/dev/null
  done
}

# A run killed outright (SIGKILL, the machine stopped under it) leaves its pid files: plants such files, naming an
# exited process and, for kube-proxy, a live program that is not kube-proxy (a pid given to another program since).
plant_stale_pids() {
  local pids="${SQUEEZE_K8S_RUN:-/run/squeeze-k8s}/pids" name gone
  STALE_PLANTED=0
  # Another cluster's state is left as it is: `up` says so and stops.
  [ ! -e "$pids/kube-apiserver.pid" ] || return 0
  mkdir -p "$pids"
  sh -c 'exit 0' &
  gone=$!
  wait "$gone"
  for name in etcd kube-apiserver kube-controller-manager kube-scheduler containerd kubelet; do
    echo "$gone" >"$pids/$name.pid"
  done
  sleep 900 &
  REUSED=$!
  echo "$REUSED" >"$pids/kube-proxy.pid"
  STALE_PLANTED=1
}

REUSED=
plant_stale_pids
trap '[ -z "$REUSED" ] || kill "$REUSED" 2>/dev/null || true' EXIT
up_log="$(mktemp)"
bash "$CLUSTER" up 2>"$up_log" || { cat "$up_log" >&2; exit 1; }
cat "$up_log" >&2
trap '[ -z "$REUSED" ] || kill "$REUSED" 2>/dev/null || true; bash "$CLUSTER" down' EXIT
if [ "$STALE_PLANTED" = 1 ]; then
  grep -q "left its state behind; clearing it first" "$up_log" || { log "up did not clear the stale pid files"; exit 1; }
  kill -0 "$REUSED" 2>/dev/null || { log "up stopped a program a stale pid file named"; exit 1; }
  kill "$REUSED"
  REUSED=
  log "0. up cleared a killed run's pid files, and left alone the program a stale one named"
fi
rm -f "$up_log"
eval "$(bash "$CLUSTER" env)"
smoke
strimzi
log "passed"
