#!/usr/bin/env bash
# minik in HA, on one machine: a three-member etcd cluster (minikd's own
# etcd, `minikd etcd-member`) and two minikd with --leader-elect sharing it
# and one PKI. Prints the PIDs to kill -9 and a kubeconfig for each API
# server, then waits; Ctrl-C stops everything and removes the data dir
# (KEEP=1 keeps it).
#
#   make build && scripts/ha.sh
#   kill -9 <pid of minikd-a>   # minikd-b takes the Leases within ~17 s
#   kill -9 <pid of etcd-0>     # the two members left keep a quorum
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin}
DATA=$(mktemp -d "${TMPDIR:-/tmp}/minik-ha.XXXXXX")
PIDS=()

cleanup() {
	for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
	for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
	if [ -z "${KEEP:-}" ]; then rm -rf "$DATA"; else echo "data kept in $DATA"; fi
}
trap cleanup EXIT INT TERM

# ETCD_PORT (default 23790) and the next five ports: client and peer ports
# of the three members; API_PORT (6443) and the next one: the two minikd.
ETCD_PORT=${ETCD_PORT:-23790}
API_PORT=${API_PORT:-6443}
initial= servers=
for i in 0 1 2; do
	initial+="${initial:+,}etcd-$i=http://127.0.0.1:$((ETCD_PORT + 2 * i + 1))"
	servers+="${servers:+,}http://127.0.0.1:$((ETCD_PORT + 2 * i))"
done
for i in 0 1 2; do
	"$BIN/minikd" etcd-member --name "etcd-$i" --data-dir "$DATA/etcd-$i" \
		--listen-client-url "http://127.0.0.1:$((ETCD_PORT + 2 * i))" \
		--listen-peer-url "http://127.0.0.1:$((ETCD_PORT + 2 * i + 1))" \
		--initial-cluster "$initial" >"$DATA/etcd-$i.log" 2>&1 &
	PIDS+=($!)
	echo "etcd-$i: pid $! (log $DATA/etcd-$i.log)"
done

# minikd-a runs the nodes and the data plane while it holds the
# minik-nodes Lease; minikd-b takes them over with the other Leases.
start_minikd() { # name port [flags]
	local name=$1 port=$2
	shift 2
	"$BIN/minikd" --data-dir "$DATA/$name" --listen "127.0.0.1:$port" --etcd-servers "$servers" \
		--leader-elect --nodes "${NODES:-3}" "$@" >"$DATA/$name.log" 2>&1 &
	PIDS+=($!)
	echo "$name: pid $! (log $DATA/$name.log)"
	until grep -q '^cluster ' "$DATA/$name.log"; do
		kill -0 "${PIDS[-1]}" 2>/dev/null || { echo "$name exited:"; tail -20 "$DATA/$name.log"; exit 1; }
		sleep 0.2
	done
}
start_minikd minikd-a "$API_PORT"
# One PKI for both, as replicas of one API server: the same CA, admin
# certificate and service-account key, so either kubeconfig works on both.
mkdir -p "$DATA/minikd-b" && cp -r "$DATA/minikd-a/pki" "$DATA/minikd-b/"
# And one network: the Service range, node ports and Ingress addresses
# minikd-a chose, so that whichever holds the Leases serves the same ones.
place=$(grep -m1 '^cluster ' "$DATA/minikd-a.log")
svc=$(sed -n 's/.*Services in \([^,]*\),.*/\1/p' <<<"$place")
nodeports=$(sed -n 's/.*node ports on \([^,]*\).*/\1/p' <<<"$place")
http=$(sed -n 's|.*Ingress on http://\([^ ]*\) and.*|\1|p' <<<"$place")
https=$(sed -n 's|.*and https://\([^ ]*\)$|\1|p' <<<"$place")
start_minikd minikd-b "$((API_PORT + 1))" --service-cluster-ip-range "$svc" --node-port-address "$nodeports" \
	--ingress-http "${http:-none}" --ingress-https "${https:-none}"

cat <<MSG

etcd cluster: $servers
export KUBECONFIG=$DATA/minikd-a/kubeconfig   # https://127.0.0.1:$API_PORT
export KUBECONFIG=$DATA/minikd-b/kubeconfig   # https://127.0.0.1:$((API_PORT + 1))
Lease holders: $BIN/minikctl -n kube-system get leases
Ctrl-C stops everything.
MSG
wait
