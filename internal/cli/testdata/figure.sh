#!/usr/bin/env bash
# Wall time of minikctl commands against a running minikd: median of N
# runs (default 20) of `minikctl get pods` and of an unchanged
# `minikctl apply -f testdata/web.yaml`.
#   KUBECONFIG=~/.minik/kubeconfig internal/cli/testdata/figure.sh [N]
set -euo pipefail
cd "$(dirname "$0")/../../.."
n=${1:-20}
bin=$(mktemp -d)/minikctl
go build -o "$bin" ./cmd/minikctl
"$bin" apply -f testdata/web.yaml >/dev/null
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
measure() {
  for _ in $(seq "$n"); do
    s=$(date +%s%N); "$bin" "$@" >/dev/null; e=$(date +%s%N)
    echo $(( (e - s) / 1000 ))
  done | median
}
echo "minikctl -n demo get pods: median $(measure -n demo get pods) µs over $n runs"
echo "minikctl apply -f testdata/web.yaml (unchanged): median $(measure apply -f testdata/web.yaml) µs over $n runs"
