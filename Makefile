# minik — build, test, demo.
GO      ?= go
BIN     := bin
PKGS    := ./...

.PHONY: all build test ecosystem conformance lint bench fuzz demo clean

all: build

build: ## bin/minikd and bin/minikctl
	$(GO) build -o $(BIN)/minikd ./cmd/minikd
	$(GO) build -o $(BIN)/minikctl ./cmd/minikctl

test: ## every test, against real embedded etcd, then the ecosystem's
	$(GO) test -count=1 -timeout 20m $(PKGS)
	$(MAKE) ecosystem

ecosystem: ## controller-runtime, envtest, Helm and kubectl against minikd (a module of its own)
	cd test/ecosystem && $(GO) test -count=1 -timeout 20m ./...

# Kubernetes' conformance suite (e2e.test of the k8s.io/kubernetes version
# test/conformance pins) against a fresh minikd; not part of test. The
# CONFORMANCE_* variables of scripts/conformance.sh choose the specs, the
# processes and the output dir.
conformance: ## the [Conformance] specs against a fresh minikd: JUnit report and per-SIG summary
	./scripts/conformance.sh

# staticcheck at a pinned version, fetched from the module proxy by go run.
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2

lint: ## gofmt check, go vet and staticcheck (staticcheck.conf)
	@out="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	cd test/ecosystem && $(GO) vet ./...
	$(STATICCHECK) $(PKGS)

# The native fuzz targets (their seeds also run under `make test`), each
# for FUZZTIME on FUZZPARALLEL workers; a failing input lands in the
# package's testdata/fuzz/<target>/, to be committed with its fix.
FUZZTIME     ?= 20s
FUZZPARALLEL ?= 2
FUZZ_TARGETS := FuzzCreate FuzzUpdate FuzzJSONPatch FuzzMergePatch FuzzStrategicMergePatch FuzzApply

fuzz: ## run each fuzz target for FUZZTIME (request decoding and each patch type)
	@for t in $(FUZZ_TARGETS); do \
		echo "fuzz $$t for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) -parallel $(FUZZPARALLEL) ./internal/api/ || exit 1; \
	done

bench: ## API vs raw etcd benchmarks, start-up time, Deployments/s
	$(GO) test -run '^$$' -bench . -skip WatchFanout -benchtime 2000x ./internal/api/
	$(GO) test -run '^$$' -bench WatchFanout -benchtime 20x ./internal/api/
	$(GO) test -run '^$$' -bench Cache -benchtime 2000x ./internal/storage/
	$(GO) test -run '^$$' -bench Startup -benchtime 10x ./internal/server/
	$(GO) test -run '^$$' -bench DeploymentsConverge -benchtime 1x ./internal/controllers/deployment/

demo: build ## the seed journey so far, on a temporary data dir
	./scripts/demo.sh

clean:
	rm -rf $(BIN)
