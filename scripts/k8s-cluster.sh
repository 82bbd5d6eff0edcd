#!/usr/bin/env bash
# A single-node Kubernetes cluster on this machine's loopback, started the way Kubernetes' own
# hack/local-up-cluster.sh does it: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, a containerd of
# its own, the kubelet and kube-proxy, each a plain process. No image registry is reachable here, so the pause image
# is compiled from Kubernetes' pause.c and imported with the other local images into containerd's k8s.io namespace.
#   k8s-cluster.sh up             start the cluster (binaries from scripts/k8s-binaries.sh); on failure, tears down
#   k8s-cluster.sh down           stop everything `up` started and remove its pods, mounts, bridge and iptables rules
#   k8s-cluster.sh run CMD...     up, run CMD with KUBECONFIG set, then down whatever CMD did
#   k8s-cluster.sh import TAR...  import image tarballs (docker save / OCI) into the cluster's containerd
#   k8s-cluster.sh pack ROOTFS NAME:TAG OUT.tar CONFIG-JSON   write ROOTFS as a one-layer image tarball
#   k8s-cluster.sh env            print the KUBECONFIG and PATH lines to use kubectl against the cluster
# The Docker engine (scripts/docker-engine.sh) is left alone: containerd here has its own socket, root and state
# directories, and the cluster's pods live on a bridge of their own.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"

STATE="${SQUEEZE_K8S_STATE:-/var/lib/squeeze-k8s}"
RUN="${SQUEEZE_K8S_RUN:-/run/squeeze-k8s}"
PKI="$STATE/pki"
LOGS="$STATE/logs"
PIDS="$RUN/pids"
CONTAINERD_SOCK="$RUN/containerd/containerd.sock"
API_PORT="${SQUEEZE_K8S_API_PORT:-16443}"
ETCD_PORT="${SQUEEZE_K8S_ETCD_PORT:-12379}"
NODE=127.0.0.1
SERVICE_CIDR=10.0.0.0/24
FIRST_SERVICE_IP=10.0.0.1
POD_CIDR=10.244.0.0/24
BRIDGE=sqk8s0
PAUSE_IMAGE=registry.k8s.io/pause:3.10.1
export KUBECONFIG="$PKI/admin.kubeconfig"

log() { echo "k8s-cluster: $*" >&2; }
die() { log "$*"; exit 1; }

binaries() {
  BIN="$(bash "$ROOT/scripts/k8s-binaries.sh")"
  export PATH="$BIN:$PATH"
}

# ---------------------------------------------------------------- certificates
# One CA signs every client and serving certificate; keys are P-256 (kube-apiserver and the kubelet accept them).
cert() { # NAME SUBJECT EXTENSIONS
  local name="$1" subject="$2" ext="$3"
  [ -s "$PKI/$name.crt" ] && return 0
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$PKI/$name.key" 2>/dev/null
  openssl req -new -key "$PKI/$name.key" -subj "$subject" -out "$PKI/$name.csr"
  openssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial -days 365 \
    -extfile <(printf '%s\n' "$ext") -out "$PKI/$name.crt" 2>/dev/null
  rm -f "$PKI/$name.csr"
}

kubeconfig() { # NAME
  cat >"$PKI/$1.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: squeeze
  cluster: {server: "https://127.0.0.1:$API_PORT", certificate-authority: "$PKI/ca.crt"}
users:
- name: $1
  user: {client-certificate: "$PKI/$1.crt", client-key: "$PKI/$1.key"}
contexts:
- name: squeeze
  context: {cluster: squeeze, user: $1}
current-context: squeeze
EOF
}

certificates() {
  mkdir -p "$PKI"
  chmod 700 "$PKI"
  if [ ! -s "$PKI/ca.crt" ]; then
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$PKI/ca.key" 2>/dev/null
    openssl req -x509 -new -key "$PKI/ca.key" -subj "/CN=squeeze-k8s-ca" -days 365 -out "$PKI/ca.crt"
  fi
  # The API server reads the token-verifying key as a public key, the signing key in the traditional EC form.
  if [ ! -s "$PKI/service-account.pub" ]; then
    openssl ecparam -name prime256v1 -genkey -noout -out "$PKI/service-account.key"
    openssl ec -in "$PKI/service-account.key" -pubout -out "$PKI/service-account.pub" 2>/dev/null
  fi
  local client='keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth'
  cert apiserver "/CN=kube-apiserver" "keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,\
DNS:kubernetes.default.svc.cluster.local,IP:127.0.0.1,IP:$FIRST_SERVICE_IP"
  cert admin "/O=system:masters/CN=squeeze-admin" "$client"
  cert controller-manager "/CN=system:kube-controller-manager" "$client"
  cert scheduler "/CN=system:kube-scheduler" "$client"
  cert kubelet "/O=system:nodes/CN=system:node:$NODE" "$client"
  cert kube-proxy "/CN=system:kube-proxy" "$client"
  cert apiserver-kubelet-client "/CN=kube-apiserver" "$client"
  local name
  for name in admin controller-manager scheduler kubelet kube-proxy; do kubeconfig "$name"; done
}

# ---------------------------------------------------------------- processes
# Each component runs in its own session, so a Ctrl-C in the calling shell does not reach it; `down` ends it.
start() { # NAME COMMAND...
  local name="$1"
  shift
  setsid "$@" >"$LOGS/$name.log" 2>&1 </dev/null &
  echo $! >"$PIDS/$name.pid"
}

alive() { [ -s "$PIDS/$1.pid" ] && kill -0 "$(cat "$PIDS/$1.pid")" 2>/dev/null; }

# Whether NAME's recorded process runs and is NAME's: a pid file a run killed outright left behind may name a pid the
# system has since given to another program. (Not for a process just started: until its exec it is a shell.)
ours() { # NAME
  local pid command
  alive "$1" || return 1
  pid="$(cat "$PIDS/$1.pid")"
  command="$({ tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null)" || return 1
  [[ "$command" == *"$1"* ]]
}

# Drops the pid files whose process is gone or is another program's, so that `down` stops only this cluster's.
forget_stale_pids() {
  local file
  for file in "$PIDS"/*.pid; do
    [ -e "$file" ] || continue
    ours "$(basename "$file" .pid)" || rm -f "$file"
  done
}

wait_for() { # NAME SECONDS COMMAND...
  local name="$1" seconds="$2" i
  shift 2
  for ((i = 0; i < seconds * 2; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    alive "$name" || { tail -n 20 "$LOGS/$name.log" >&2; die "$name exited; log: $LOGS/$name.log"; }
    sleep 0.5
  done
  tail -n 20 "$LOGS/$name.log" >&2
  die "$name not ready within $seconds s; log: $LOGS/$name.log"
}

stop_process() { # NAME
  local pid i
  [ -s "$PIDS/$1.pid" ] || return 0
  pid="$(cat "$PIDS/$1.pid")"
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for ((i = 0; i < 40; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.25
    done
    kill -9 "$pid" 2>/dev/null || true
    log "stopped $1"
  fi
  rm -f "$PIDS/$1.pid"
}

# ---------------------------------------------------------------- components
start_etcd() {
  start etcd etcd --name squeeze-k8s --data-dir "$STATE/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$((ETCD_PORT + 1))" \
    --initial-advertise-peer-urls "http://127.0.0.1:$((ETCD_PORT + 1))" \
    --initial-cluster "squeeze-k8s=http://127.0.0.1:$((ETCD_PORT + 1))"
  wait_for etcd 60 curl -fsS "http://127.0.0.1:$ETCD_PORT/health"
}

start_apiserver() {
  start kube-apiserver kube-apiserver --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
    --bind-address=127.0.0.1 --secure-port="$API_PORT" --cert-dir="$PKI" \
    --tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" \
    --client-ca-file="$PKI/ca.crt" \
    --kubelet-client-certificate="$PKI/apiserver-kubelet-client.crt" \
    --kubelet-client-key="$PKI/apiserver-kubelet-client.key" \
    --service-account-key-file="$PKI/service-account.pub" \
    --service-account-signing-key-file="$PKI/service-account.key" \
    --service-account-issuer=https://kubernetes.default.svc \
    --service-cluster-ip-range="$SERVICE_CIDR" \
    --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction --profiling=false
  wait_for kube-apiserver 180 kubectl get --raw /readyz
  # The API server calls the kubelet (logs, exec) as user kube-apiserver.
  kubectl create clusterrolebinding kube-apiserver-kubelet-admin --clusterrole=system:kubelet-api-admin \
    --user=kube-apiserver --dry-run=client -o yaml | kubectl apply -f - >/dev/null
}

start_controllers() {
  start kube-controller-manager kube-controller-manager --kubeconfig="$PKI/controller-manager.kubeconfig" \
    --authentication-kubeconfig="$PKI/controller-manager.kubeconfig" \
    --authorization-kubeconfig="$PKI/controller-manager.kubeconfig" \
    --bind-address=127.0.0.1 --leader-elect=false --use-service-account-credentials \
    --service-account-private-key-file="$PKI/service-account.key" --root-ca-file="$PKI/ca.crt" \
    --cluster-signing-cert-file="$PKI/ca.crt" --cluster-signing-key-file="$PKI/ca.key" \
    --service-cluster-ip-range="$SERVICE_CIDR" --allocate-node-cidrs=false
  start kube-scheduler kube-scheduler --kubeconfig="$PKI/scheduler.kubeconfig" \
    --authentication-kubeconfig="$PKI/scheduler.kubeconfig" --authorization-kubeconfig="$PKI/scheduler.kubeconfig" \
    --bind-address=127.0.0.1 --leader-elect=false
  wait_for kube-controller-manager 60 curl -fsSk https://127.0.0.1:10257/healthz
  wait_for kube-scheduler 60 curl -fsSk https://127.0.0.1:10259/healthz
}

start_containerd() {
  mkdir -p "$STATE/containerd" "$RUN/containerd" "$STATE/cni/net.d"
  # Version 2 is the config format of containerd 1.6; cgroupfs matches the kubelet's driver (no systemd here).
  # restrict_oom_score_adj: the kubelet asks for a negative OOM score for sandboxes, which runc can only set with
  # CAP_SYS_RESOURCE; where root lacks it (as in this machine's VM), runc fails to start any pod without this.
  cat >"$STATE/containerd.toml" <<EOF
version = 2
root = "$STATE/containerd"
state = "$RUN/containerd"
[grpc]
  address = "$CONTAINERD_SOCK"
[ttrpc]
  address = "$CONTAINERD_SOCK.ttrpc"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$STATE/cni/net.d"
[plugins."io.containerd.internal.v1.opt"]
  path = "$STATE/containerd-opt"
EOF
  # Pods get addresses on a bridge of their own; no masquerading, so nothing leaves the machine through it. Their
  # one route besides the pod subnet is the service range, through the bridge, where kube-proxy's DNAT answers.
  cat >"$STATE/cni/net.d/10-squeeze.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "squeeze-k8s",
  "plugins": [
    {
      "type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
      "ipam": {
        "type": "host-local", "ranges": [[{"subnet": "$POD_CIDR"}]], "dataDir": "$STATE/cni/ipam",
        "routes": [{"dst": "$SERVICE_CIDR"}]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
  # The bridge exists before the first pod so that the service range can be routed onto it: a cluster IP
  # that kube-proxy has not (yet) translated then stays on this machine instead of following the default route.
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link add "$BRIDGE" type bridge
    ip addr add "${POD_CIDR%.*}.1/${POD_CIDR#*/}" dev "$BRIDGE"
    ip link set "$BRIDGE" up
  fi
  ip route replace "$SERVICE_CIDR" dev "$BRIDGE"
  # The CNI bridge plugin turns IP forwarding on (pods reach services through the host's DNAT); nothing forwarded
  # may leave through the default route's interface while it is on, and `down` puts the old value back.
  sysctl -n net.ipv4.ip_forward >"$RUN/ip_forward.orig"
  local uplink
  uplink="$(ip route show default | awk '{ for (i = 1; i < NF; i++) if ($i == "dev") { print $(i + 1); exit } }')"
  if [ -n "$uplink" ]; then
    echo "$uplink" >"$RUN/uplink"
    iptables -I FORWARD -o "$uplink" -m comment --comment squeeze-k8s -j DROP
  fi
  start containerd containerd --config "$STATE/containerd.toml"
  wait_for containerd 60 ctr --address "$CONTAINERD_SOCK" version
}

start_kubelet() {
  mkdir -p "$STATE/kubelet"
  # No --node-ip: the kubelet refuses a loopback one and then publishes no address at all, so the API server
  # could not reach it for logs and exec. Without the flag it takes the node's addresses from the hostname
  # override (127.0.0.1), where it listens.
  # cgroupfs: this machine has no systemd. failCgroupV1 false: its cgroup hierarchy is v1, which this Kubernetes
  # still runs on. Eviction thresholds sit low because the disk is shared with builds that come and go.
  cat >"$STATE/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
healthzBindAddress: 127.0.0.1
readOnlyPort: 0
containerRuntimeEndpoint: unix://$CONTAINERD_SOCK
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: "$PKI/ca.crt"}
authorization: {mode: Webhook}
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
imageGCHighThresholdPercent: 100
evictionHard: {memory.available: 100Mi, nodefs.available: 2%, imagefs.available: 2%}
EOF
  start kubelet kubelet --config="$STATE/kubelet.yaml" --kubeconfig="$PKI/kubelet.kubeconfig" \
    --hostname-override="$NODE" --root-dir="$STATE/kubelet" --cert-dir="$STATE/kubelet/pki"
  wait_for kubelet 120 kubectl get node "$NODE"
  wait_for kubelet 120 kubectl wait --for=condition=Ready node/"$NODE" --timeout=1s
}

start_proxy() {
  sysctl -n net.bridge.bridge-nf-call-iptables >"$RUN/bridge-nf-call-iptables.orig"
  # Service addresses are DNAT rules in iptables; bridged pod traffic must pass them.
  sysctl -qw net.bridge.bridge-nf-call-iptables=1
  # The conntrack and localhost-NodePort settings stay as the machine has them (0 = leave as is).
  start kube-proxy kube-proxy --kubeconfig="$PKI/kube-proxy.kubeconfig" --hostname-override="$NODE" \
    --proxy-mode=iptables --cluster-cidr="$POD_CIDR" --bind-address=127.0.0.1 \
    --healthz-bind-address=127.0.0.1:10256 --metrics-bind-address=127.0.0.1:10249 \
    --conntrack-max-per-core=0 --conntrack-tcp-timeout-established=0 --conntrack-tcp-timeout-close-wait=0 \
    --iptables-localhost-nodeports=false
  wait_for kube-proxy 60 curl -fsS http://127.0.0.1:10256/healthz
}

# ---------------------------------------------------------------- images
# Writes a docker-archive tarball (what `docker save` writes) holding ROOTFS as one layer.
pack_image() { # ROOTFS NAME:TAG OUT CONFIG-JSON
  local rootfs="$1" ref="$2" out="$3" config="$4" dir layer_id config_id
  dir="$(mktemp -d)"
  tar -C "$rootfs" --numeric-owner --owner=0 --group=0 --sort=name --mtime=@0 -cf "$dir/layer.tar" .
  layer_id="$(sha256sum "$dir/layer.tar" | cut -d' ' -f1)"
  mkdir "$dir/$layer_id"
  mv "$dir/layer.tar" "$dir/$layer_id/layer.tar"
  printf '{"architecture":"amd64","os":"linux","config":%s,"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
    "$config" "$layer_id" >"$dir/config.json"
  config_id="$(sha256sum "$dir/config.json" | cut -d' ' -f1)"
  mv "$dir/config.json" "$dir/$config_id.json"
  printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["%s/layer.tar"]}]' "$config_id" "$ref" "$layer_id" \
    >"$dir/manifest.json"
  tar -C "$dir" -cf "$out.tmp" manifest.json "$config_id.json" "$layer_id"
  mv "$out.tmp" "$out"
  rm -rf "$dir"
}

# The pause image as Kubernetes' build/pause builds it: pause.c compiled statically, alone in the image.
pause_image() {
  local out src rootfs
  out="$(dirname "$BIN")/images/pause.tar"
  if [ ! -s "$out" ]; then
    src="$(cd "$ROOT/tools/k8s" && go list -m -f '{{.Dir}}' k8s.io/kubernetes)/build/pause/linux/pause.c"
    [ -f "$src" ] || die "no pause.c at $src"
    mkdir -p "$(dirname "$out")"
    rootfs="$(mktemp -d)"
    gcc -Os -Wall -Werror -static -DVERSION="v${PAUSE_IMAGE##*:}-squeeze" -o "$rootfs/pause" "$src"
    pack_image "$rootfs" "$PAUSE_IMAGE" "$out" '{"Entrypoint":["/pause"],"User":"65535:65535"}'
    rm -rf "$rootfs"
  fi
  echo "$out"
}

# The name containerd files a docker-archive tag under: docker.io/library/NAME:TAG for a bare name, as the CRI does.
full_ref() {
  case "$1" in
    */*/*) echo "$1" ;;
    */*) [[ "${1%%/*}" == *.* || "${1%%/*}" == *:* ]] && echo "$1" || echo "docker.io/$1" ;;
    *) echo "docker.io/library/$1" ;;
  esac
}

# True when containerd already holds every tag of TAR with the same image config (an image ID): images stay
# between runs, and importing a large one again costs a minute of disk writes for nothing.
imported() { # TAR
  local manifest config ref digest
  manifest="$(tar -xOf "$1" manifest.json 2>/dev/null)" || return 1
  # "<id>.json" from older Docker engines, "blobs/sha256/<id>" from newer ones.
  config="$(grep -o '"Config":"[^"]*"' <<<"$manifest" | grep -o '[0-9a-f]\{64\}' | head -n1)"
  [ -n "$config" ] || return 1
  for ref in $(sed -n 's/.*"RepoTags":\[\([^]]*\)\].*/\1/p' <<<"$manifest" | tr -d '"' | tr ',' ' '); do
    digest="$(ctr --address "$CONTAINERD_SOCK" -n k8s.io images ls "name==$(full_ref "$ref")" 2>/dev/null |
      awk 'NR == 2 { print $3 }')"
    [ -n "$digest" ] || return 1
    ctr --address "$CONTAINERD_SOCK" -n k8s.io content get "$digest" 2>/dev/null | grep -q "sha256:$config" || return 1
  done
}

import_images() { # TAR...
  local tar
  for tar in "$@"; do
    if imported "$tar"; then
      log "already imported: $tar"
      continue
    fi
    ctr --address "$CONTAINERD_SOCK" -n k8s.io images import "$tar" >/dev/null
    log "imported $tar"
  done
}

# ---------------------------------------------------------------- verbs
up() {
  [ "$(id -u)" -eq 0 ] || die "needs root (containerd, kubelet, iptables)"
  if [ -s "$PIDS/kube-apiserver.pid" ]; then
    ! ours kube-apiserver || die "already up (state in $STATE); run '$0 down' first"
    # A run killed outright (SIGKILL, a machine stopped under it) leaves its pid files, mounts, bridge and rules.
    log "a cluster whose API server is gone left its state behind; clearing it first"
    forget_stale_pids
    down
  fi
  bash "$ROOT/scripts/ensure-apt.sh" containerd runc containernetworking-plugins iptables conntrack etcd-server \
    curl openssl gcc libc6-dev
  binaries
  mkdir -p "$LOGS" "$PIDS"
  trap 'log "up failed; tearing down"; down' EXIT
  certificates
  start_etcd
  start_apiserver
  start_controllers
  start_containerd
  import_images "$(pause_image)"
  start_kubelet
  start_proxy
  trap - EXIT
  log "up: node $NODE Ready; export KUBECONFIG=$KUBECONFIG PATH=$BIN:\$PATH"
}

# kube-proxy --cleanup leaves the kubelet's own chains (KUBE-FIREWALL, KUBE-KUBELET-CANARY, KUBE-IPTABLES-HINT);
# on a machine running no other Kubernetes node, every KUBE- chain is this cluster's.
remove_kubelet_chains() {
  local tool table rule chain
  for tool in iptables ip6tables; do
    command -v "$tool" >/dev/null || continue
    for table in filter nat mangle; do
      { "$tool-save" -t "$table" 2>/dev/null || true; } | { grep -E '^-A [A-Z]+ .*-j KUBE-' || true; } | while read -r rule; do
        eval "$tool -t $table -D ${rule#-A }" 2>/dev/null || true
      done
      for chain in $("$tool-save" -t "$table" 2>/dev/null | sed -n 's/^:\(KUBE-[A-Z0-9-]*\) .*/\1/p'); do
        "$tool" -t "$table" -F "$chain" 2>/dev/null || true
        "$tool" -t "$table" -X "$chain" 2>/dev/null || true
      done
    done
  done
}

# Unmounts, deepest first, whatever is still mounted under PREFIX.
unmount_under() {
  local m
  awk -v p="$1" 'index($2, p) == 1 { print $2 }' /proc/mounts | sort -r | while read -r m; do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
  done
}

down() {
  trap - EXIT
  mkdir -p "$PIDS"
  if [ -z "${BIN:-}" ]; then BIN="$(bash "$ROOT/scripts/k8s-binaries.sh" --dir 2>/dev/null || true)"; fi
  [ -z "$BIN" ] || export PATH="$BIN:$PATH"
  # No controller may replace the pods removed next; the kubelet tears their sandboxes and networks down.
  stop_process kube-controller-manager
  stop_process kube-scheduler
  if alive kubelet && alive kube-apiserver; then
    kubectl delete pods --all --all-namespaces --grace-period=5 --timeout=60s >/dev/null 2>&1 || true
  fi
  stop_process kubelet
  if alive containerd; then
    local id
    for id in $(ctr --address "$CONTAINERD_SOCK" -n k8s.io tasks ls -q 2>/dev/null); do
      ctr --address "$CONTAINERD_SOCK" -n k8s.io tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true
    done
  fi
  stop_process containerd
  # Shims outlive containerd by design; only those serving this containerd's socket are ours.
  local pid
  for pid in $(pgrep -f containerd-shim-runc-v2 || true); do
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "-address $CONTAINERD_SOCK " && kill -9 "$pid" || true
  done
  stop_process kube-proxy
  # Also after a kube-proxy that died: its rules outlive it.
  [ -z "$BIN" ] || kube-proxy --cleanup >/dev/null 2>&1 || log "kube-proxy --cleanup failed"
  remove_kubelet_chains
  if [ -s "$RUN/uplink" ]; then
    iptables -D FORWARD -o "$(cat "$RUN/uplink")" -m comment --comment squeeze-k8s -j DROP 2>/dev/null || true
    rm -f "$RUN/uplink"
  fi
  if [ -s "$RUN/ip_forward.orig" ]; then
    sysctl -qw net.ipv4.ip_forward="$(cat "$RUN/ip_forward.orig")"
    rm -f "$RUN/ip_forward.orig"
  fi
  if [ -s "$RUN/bridge-nf-call-iptables.orig" ]; then
    sysctl -qw net.bridge.bridge-nf-call-iptables="$(cat "$RUN/bridge-nf-call-iptables.orig")"
    rm -f "$RUN/bridge-nf-call-iptables.orig"
  fi
  stop_process kube-apiserver
  stop_process etcd
  unmount_under "$STATE/"
  unmount_under "$RUN/"
  ip link del "$BRIDGE" 2>/dev/null || true
  # The kubelet's empty pod cgroups (cgroupfs driver), deepest first; a cgroup still in use refuses rmdir.
  find /sys/fs/cgroup/*/kubepods -depth -type d -exec rmdir {} \; 2>/dev/null || true
  # Volumes (hostPath PersistentVolumes of the tests) go with etcd, which held their claims.
  rm -rf "$STATE/cni/ipam" "$STATE/etcd" "$STATE/kubelet" "$STATE/volumes"
  # The kubelet writes container logs where every kubelet does (a node-log DaemonSet reads them there), and stops
  # before it has removed those of the pods deleted above; as with the KUBE- chains, they are all this cluster's.
  find /var/log/containers -maxdepth 1 -type l -lname '/var/log/pods/*' -delete 2>/dev/null || true
  find /var/log/pods -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} + 2>/dev/null || true
  log "down"
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  run)
    shift
    [ $# -gt 0 ] || die "usage: $0 run COMMAND..."
    up
    trap down EXIT
    BIN="$BIN" PATH="$BIN:$PATH" "$@"
    ;;
  import)
    shift
    import_images "$@"
    ;;
  pack)
    shift
    [ $# -eq 4 ] || die "usage: $0 pack ROOTFS NAME:TAG OUT.tar CONFIG-JSON"
    pack_image "$@"
    ;;
  env) echo "export KUBECONFIG=$KUBECONFIG PATH=$(bash "$ROOT/scripts/k8s-binaries.sh" --dir):\$PATH" ;;
  *)
    echo "usage: $0 up|down|run COMMAND...|import TAR...|pack ...|env" >&2
    exit 2
    ;;
esac
