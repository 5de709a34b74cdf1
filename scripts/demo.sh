#!/usr/bin/env bash
# The seed journey as far as minik walks it today: start minikd on a
# temporary data dir, apply testdata/web.yaml, read it back, stop cleanly.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin}
DATA=$(mktemp -d "${TMPDIR:-/tmp}/minik-demo.XXXXXX")
LOG="$DATA/minikd.log"
PID=

cleanup() {
	if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then
		kill -TERM "$PID"
		wait "$PID" || true
	fi
	rm -rf "$DATA"
}
trap cleanup EXIT

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }

"$BIN/minikd" --data-dir "$DATA" --listen 127.0.0.1:0 >"$LOG" 2>&1 &
PID=$!
for _ in $(seq 1 200); do
	[ -f "$DATA/kubeconfig" ] && break
	kill -0 "$PID" 2>/dev/null || { cat "$LOG"; exit 1; }
	sleep 0.05
done
[ -f "$DATA/kubeconfig" ] || { echo "minikd did not become ready"; cat "$LOG"; exit 1; }
head -1 "$LOG"
export KUBECONFIG="$DATA/kubeconfig"
NS=demo

step "kubectl apply -f web.yaml"
"$BIN/minikctl" apply -f testdata/web.yaml
step "kubectl apply -f web.yaml   # again: nothing changes"
"$BIN/minikctl" apply -f testdata/web.yaml
step "kubectl -n $NS get deployment,replicaset,pod"
"$BIN/minikctl" -n "$NS" get deployment,replicaset,pod
step "kubectl -n $NS get service,ingress -o wide"
"$BIN/minikctl" -n "$NS" get service,ingress -o wide
step "kubectl -n $NS get deployment web -o yaml"
"$BIN/minikctl" -n "$NS" get deployment web -o yaml
step "kubectl -n $NS get deployment nope   # a failure reads as kubectl's"
"$BIN/minikctl" -n "$NS" get deployment nope || echo "(exit $?)"

step "stopping minikd (SIGTERM)"
kill -TERM "$PID"
wait "$PID"
PID=
echo "stopped cleanly"
