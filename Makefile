# minik — build, test, demo.
GO      ?= go
BIN     := bin
PKGS    := ./...

.PHONY: all build test ecosystem lint bench demo clean

all: build

build: ## bin/minikd and bin/minikctl
	$(GO) build -o $(BIN)/minikd ./cmd/minikd
	$(GO) build -o $(BIN)/minikctl ./cmd/minikctl

test: ## every test, against real embedded etcd, then the ecosystem's
	$(GO) test -count=1 -timeout 20m $(PKGS)
	$(MAKE) ecosystem

ecosystem: ## controller-runtime, envtest and Helm against minikd (a module of its own)
	cd test/ecosystem && $(GO) test -count=1 -timeout 20m ./...

lint: ## gofmt check and go vet
	@out="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	cd test/ecosystem && $(GO) vet ./...

bench: ## API vs raw etcd benchmarks and start-up time
	$(GO) test -run '^$$' -bench . -benchtime 2000x ./internal/api/
	$(GO) test -run '^$$' -bench Startup -benchtime 10x ./internal/server/

demo: build ## the seed journey so far, on a temporary data dir
	./scripts/demo.sh

clean:
	rm -rf $(BIN)
