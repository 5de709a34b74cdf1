#!/usr/bin/env bash
# Kubernetes' conformance suite against a fresh minikd.
#
# Builds the suite (e2e.test, `go test -c` of k8s.io/kubernetes/test/e2e
# with the version ldflags a release build has) and ginkgo from the pins
# in test/conformance/go.mod into a cache dir, reused while the pinned
# version stays; builds minikd and minikctl; starts minikd on a temporary
# data dir (the default NodePort range) and waits for its nodes; runs the
# selected specs with ginkgo in parallel (--provider=skeleton); writes the
# JUnit report and a per-SIG summary into the output dir; stops minikd and
# removes its data dir. Exits with ginkgo's status.
#
# Environment (all optional):
#   CONFORMANCE_FOCUS    ginkgo --focus regexp        (default '\[Conformance\]')
#   CONFORMANCE_SKIP     ginkgo --skip regexp         (default '\[Serial\]'; empty: run Serial specs too, last)
#   CONFORMANCE_PROCS    parallel ginkgo processes    (default 4)
#   CONFORMANCE_TIMEOUT  the suite's --timeout        (default 2h)
#   CONFORMANCE_OUT      output dir                   (default /tmp/minik-conformance/<UTC time>)
#   CONFORMANCE_CACHE    where e2e.test and ginkgo are kept
#                        (default ${XDG_CACHE_HOME:-~/.cache}/minik-conformance/<k8s version>)
#   CONFORMANCE_KUBECTL  the kubectl the sig-cli specs run (default bin/minikctl)
#   CONFORMANCE_ARGS     more e2e.test flags, split on spaces
#
# The output dir holds junit_01.xml (e2e.test's --report-dir), summary.txt
# (passed/failed/skipped per [sig-xxx], the failure reasons, every failed
# spec with the first line of its failure), ginkgo.log and minikd.log.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
GO=${GO:-go}
BIN=${BIN:-bin}
MODULE=$ROOT/test/conformance

K8S_VERSION=$(cd "$MODULE" && "$GO" list -m -f '{{.Version}}' k8s.io/kubernetes)
CACHE=${CONFORMANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/minik-conformance/$K8S_VERSION}
OUT=${CONFORMANCE_OUT:-/tmp/minik-conformance/$(date -u +%Y%m%dT%H%M%SZ)}
FOCUS=${CONFORMANCE_FOCUS-'\[Conformance\]'}
SKIP=${CONFORMANCE_SKIP-'\[Serial\]'}
PROCS=${CONFORMANCE_PROCS:-4}
TIMEOUT=${CONFORMANCE_TIMEOUT:-2h}
read -r -a EXTRA <<<"${CONFORMANCE_ARGS:-}"

mkdir -p "$CACHE" "$OUT"
OUT=$(cd "$OUT" && pwd)

# build NAME CMD...: runs CMD (which writes $CACHE/NAME.tmp) at a low
# priority unless $CACHE/NAME is there, then moves the result in place,
# so that an interrupted build never leaves a binary that looks whole.
build() {
	local name=$1
	shift
	if [ -x "$CACHE/$name" ]; then
		echo "have $CACHE/$name"
		return
	fi
	echo "building $CACHE/$name (the suite takes about 15 minutes of CPU on 2 cores) ..."
	(cd "$MODULE" && nice -n 10 "$@")
	mv "$CACHE/$name.tmp" "$CACHE/$name"
}

# The version a release build stamps, so that the suite's version checks
# (and its User-Agent) read v1.37.x, not v0.0.0.
minor=${K8S_VERSION#v1.}
minor=${minor%%.*}
LDFLAGS=""
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	LDFLAGS="$LDFLAGS -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
	LDFLAGS="$LDFLAGS -X $p.gitTreeState=clean -X $p.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
done
build ginkgo "$GO" build -o "$CACHE/ginkgo.tmp" github.com/onsi/ginkgo/v2/ginkgo
build e2e.test "$GO" test -c -ldflags "$LDFLAGS" -o "$CACHE/e2e.test.tmp" k8s.io/kubernetes/test/e2e

echo "building minikd and minikctl ..."
"$GO" build -o "$BIN/minikd" ./cmd/minikd
"$GO" build -o "$BIN/minikctl" ./cmd/minikctl
KUBECTL=${CONFORMANCE_KUBECTL:-$(cd "$BIN" && pwd)/minikctl}

DATA=$(mktemp -d "${TMPDIR:-/tmp}/minik-conformance-data.XXXXXX")
LOG="$OUT/minikd.log"
PID=

# cleanup stops minikd (SIGTERM; it closes etcd last) and removes its data
# dir; minikd.log stays in the output dir.
cleanup() {
	if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then
		kill -TERM "$PID"
		wait "$PID" || true
	fi
	rm -rf "$DATA"
}
trap cleanup EXIT

NODES=3
"$BIN/minikd" --data-dir "$DATA" --listen 127.0.0.1:0 --nodes "$NODES" \
	--service-node-port-range 30000-32767 >"$LOG" 2>&1 &
PID=$!
# minikd prints its serving line once the API serves and the kubeconfig
# is written; on a loaded machine that may take a while.
for _ in $(seq 1 2400); do
	grep -q 'minikd serving' "$LOG" && break
	kill -0 "$PID" 2>/dev/null || {
		cat "$LOG"
		exit 1
	}
	sleep 0.05
done
grep -q 'minikd serving' "$LOG" || {
	echo "minikd did not become ready"
	cat "$LOG"
	exit 1
}
grep -m1 'minikd serving' "$LOG"
export KUBECONFIG="$DATA/kubeconfig"
for _ in $(seq 1 2400); do
	[ "$("$BIN/minikctl" get nodes -o name 2>/dev/null | wc -l)" -ge "$NODES" ] && break
	sleep 0.05
done
"$BIN/minikctl" wait --for=condition=Ready node --all --timeout=120s

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
echo "running e2e.test $K8S_VERSION: focus '$FOCUS', skip '$SKIP', $PROCS processes, timeout $TIMEOUT; output in $OUT"
start=$(date +%s)
status=0
"$CACHE/ginkgo" --procs="$PROCS" --timeout="$TIMEOUT" --no-color --silence-skips \
	--focus="$FOCUS" ${SKIP:+--skip="$SKIP"} \
	"$CACHE/e2e.test" -- \
	--provider=skeleton --kubeconfig="$KUBECONFIG" --kubectl-path="$KUBECTL" \
	--report-dir="$OUT" --e2e-output-dir="$OUT" "${EXTRA[@]}" \
	2>&1 | tee "$OUT/ginkgo.log" || status=$?
wall=$(($(date +%s) - start))

{
	echo "conformance $K8S_VERSION against minikd $commit, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "focus '$FOCUS', skip '$SKIP', $PROCS processes, timeout $TIMEOUT, kubectl $KUBECTL"
	echo "wall time $((wall / 60))m$((wall % 60))s, ginkgo exit status $status"
	echo
	(cd "$MODULE" && "$GO" run ./summary "$OUT")
} >"$OUT/summary.txt" ||
	# Ginkgo's first process writes the report after the last spec, from
	# every process's results; when one of them crashed or was killed there
	# is none (ginkgo.log says which).
	echo "no JUnit report: an e2e.test process did not finish (see $OUT/ginkgo.log)" >>"$OUT/summary.txt"
echo
cat "$OUT/summary.txt"
echo
echo "JUnit report, summary and logs in $OUT"
exit "$status"
