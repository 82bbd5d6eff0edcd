#!/usr/bin/env bash
# End-to-end check on a real single-node cluster (scripts/k8s-cluster.sh), outside the test suite because a cold
# build of the Kubernetes binaries takes far longer than the suite may. Starts the cluster, then:
#   1. a Deployment on a locally built image (Debian's static busybox) becomes Ready under the `restricted` Pod
#      Security Standard, answers its readiness probe, and its Service's cluster IP answers through kube-proxy;
#   2. every resource of k8s/strimzi passes `kubectl apply --dry-run=server` against Strimzi's own CRDs
#      (scripts/strimzi-crds.sh) for each Strimzi version named in SQUEEZE_STRIMZI_VERSIONS;
# and stops the cluster whatever happened. Exits non-zero on the first check that fails.
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

bash "$CLUSTER" up
trap 'bash "$CLUSTER" down' EXIT
eval "$(bash "$CLUSTER" env)"
smoke
strimzi
log "passed"
