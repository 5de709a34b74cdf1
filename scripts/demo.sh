#!/usr/bin/env bash
# The seed's release journey, stage by stage, on a fresh minikd with a
# temporary data dir: apply → controllers → scheduler → nodes → ready →
# endpoints → routed traffic (also from inside a pod, by DNS name) →
# rollout converged, then the failure checkpoints. Stops minikd cleanly
# and removes the data dir at the end.
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

stage() { printf '\n\033[1;34m== %s\033[0m\n' "$*"; }
step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
k() { "$BIN/minikctl" "$@"; }

# A free loopback port for the ingress proxy: one nobody answers on.
free_port() {
	local p
	for p in $(seq "$1" $(($1 + 100))); do
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
	echo "no free port near $1" >&2
	exit 1
}
HTTP_PORT=$(free_port 18080)
HTTPS_PORT=$(free_port $((HTTP_PORT + 1)))

"$BIN/minikd" --data-dir "$DATA" --listen 127.0.0.1:0 \
	--ingress-http "127.0.0.1:$HTTP_PORT" --ingress-https "127.0.0.1:$HTTPS_PORT" >"$LOG" 2>&1 &
PID=$!
# minikd prints its serving line once the API serves and the kubeconfig
# is written; a loaded machine may take a while, so wait up to two minutes.
for _ in $(seq 1 2400); do
	grep -q 'minikd serving' "$LOG" && break
	kill -0 "$PID" 2>/dev/null || { cat "$LOG"; exit 1; }
	sleep 0.05
done
grep -q 'minikd serving' "$LOG" || { echo "minikd did not become ready"; cat "$LOG"; exit 1; }
grep -m1 'minikd serving' "$LOG"
export KUBECONFIG="$DATA/kubeconfig"
NS=demo

# The nodes register a moment after the API serves: wait for all three
# to be Ready before the first look, so that it never reads "No resources
# found".
for _ in $(seq 1 2400); do
	[ "$(k get nodes -o name 2>/dev/null | wc -l)" -ge 3 ] && break
	sleep 0.05
done
k wait --for=condition=Ready node --all --timeout=120s >/dev/null

stage "the cluster: three simulated nodes"
step "kubectl get nodes -o wide"
k get nodes -o wide

stage "1. submit the desired objects"
step "kubectl apply -f web.yaml"
k apply -f testdata/web.yaml
step "kubectl apply -f web.yaml   # again: nothing to change"
k apply -f testdata/web.yaml

stage "6 (early). wait for the rollout to converge"
step "kubectl -n $NS rollout status deployment/web --timeout=120s"
k -n "$NS" rollout status deployment/web --timeout=120s

stage "2. controllers created the workload"
step "kubectl -n $NS get deployment,replicaset,pod"
k -n "$NS" get deployment,replicaset,pod
step "kubectl -n $NS describe deployment web"
k -n "$NS" describe deployment web

stage "3. scheduled onto nodes"
step "kubectl -n $NS get pod -o wide"
k -n "$NS" get pod -o wide
FIRST=$(k -n "$NS" get pod -l app=web -o name | sed -n 1p)
step "kubectl -n $NS describe $FIRST"
k -n "$NS" describe "$FIRST"

stage "4. the nodes run the containers"
step "kubectl logs deployment/web --all-pods=true --all-containers=true --prefix=true --namespace $NS"
k logs deployment/web --all-pods=true --all-containers=true --prefix=true --namespace "$NS"

stage "5. ready pods receive traffic"
step "kubectl -n $NS get pod,endpointslice,service"
k -n "$NS" get pod,endpointslice,service
step "kubectl -n $NS describe service web"
k -n "$NS" describe service web
step "kubectl -n $NS get ingress web"
k -n "$NS" get ingress web
for i in 1 2 3; do
	step "curl -H 'Host: web.demo.local' http://127.0.0.1:$HTTP_PORT/   # request $i"
	curl -fsS -H 'Host: web.demo.local' "http://127.0.0.1:$HTTP_PORT/" | grep -iE '<title>|pod' | sed -n 1,3p
done

stage "5b. inside a pod: exec, the cluster DNS, metrics"
step "kubectl -n $NS exec $FIRST -- cat /etc/resolv.conf"
k -n "$NS" exec "$FIRST" -- cat /etc/resolv.conf
step "kubectl -n $NS exec $FIRST -- wget -qO- http://web.$NS.svc.cluster.local/   # the Service by its DNS name"
k -n "$NS" exec "$FIRST" -- wget -qO- "http://web.$NS.svc.cluster.local/" | grep -i '<title>'
step "kubectl -n $NS exec $FIRST -- sh -c 'exit 3'   # the exit code comes back"
k -n "$NS" exec "$FIRST" -- sh -c 'exit 3' || echo "(exit $?)"
# The metrics server answers once it has scraped the nodes; wait for it.
for _ in $(seq 1 600); do
	k -n "$NS" top pods >/dev/null 2>&1 && break
	sleep 0.1
done
step "kubectl -n $NS top pods"
k -n "$NS" top pods

stage "6. the rollout has converged"
step "kubectl -n $NS get deployment web -o yaml   # status"
k -n "$NS" get deployment web -o yaml | sed -n '/^status:/,$p'

stage "failure checkpoint: the API server refuses (RBAC)"
SA=system:serviceaccount:$NS:default
step "kubectl -n $NS auth can-i patch deployments --as $SA"
k -n "$NS" auth can-i patch deployments --as "$SA" || echo "(exit $?)"
step "kubectl -n $NS scale deployment web --replicas 5 --as $SA"
k -n "$NS" scale deployment web --replicas 5 --as "$SA" || echo "(exit $?)"

stage "failure checkpoint: the pod stays Pending (resource requests)"
step "kubectl -n $NS apply -f testdata/failures/insufficient-cpu.yaml"
k -n "$NS" apply -f testdata/failures/insufficient-cpu.yaml
k -n "$NS" wait --for=condition=PodScheduled=False pod/insufficient-cpu --timeout=60s >/dev/null || true
step "kubectl -n $NS get pod insufficient-cpu"
k -n "$NS" get pod insufficient-cpu
step "kubectl -n $NS describe pod insufficient-cpu   # Events say why"
k -n "$NS" describe pod insufficient-cpu | sed -n '/^Events:/,$p'

stage "failure checkpoint: the container does not start (bad image tag)"
step "kubectl -n $NS apply -f testdata/failures/bad-image-tag.yaml"
k -n "$NS" apply -f testdata/failures/bad-image-tag.yaml
k -n "$NS" wait --for=jsonpath='{.status.containerStatuses[0].state.waiting.reason}'=ErrImagePull pod/bad-image-tag --timeout=60s >/dev/null ||
	k -n "$NS" wait --for=jsonpath='{.status.containerStatuses[0].state.waiting.reason}'=ImagePullBackOff pod/bad-image-tag --timeout=60s >/dev/null || true
step "kubectl -n $NS get pod bad-image-tag"
k -n "$NS" get pod bad-image-tag
step "kubectl -n $NS describe pod bad-image-tag   # Events say why"
k -n "$NS" describe pod bad-image-tag | sed -n '/^Events:/,$p'

stage "failure checkpoint: a lookup that fails reads as kubectl's"
step "kubectl -n $NS get deployment nope"
k -n "$NS" get deployment nope || echo "(exit $?)"

stage "the journey of web's rollout, from minikd's write trail"
step "minikctl -n $NS journey deployment/web"
k -n "$NS" journey deployment/web
HTML="$BIN/web-journey.html"
step "minikctl -n $NS journey deployment/web -o html > $HTML"
k -n "$NS" journey deployment/web -o html >"$HTML"
echo "wrote $HTML (both sequence diagrams, one self-contained page)"

stage "stopping minikd (SIGTERM)"
kill -TERM "$PID"
wait "$PID"
PID=
echo "stopped cleanly"
