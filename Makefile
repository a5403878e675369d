# Paddock. `sudo make run` and `sudo make test` are the two commands the
# README promises work on a fresh Debian/Ubuntu machine.
SHELL := /bin/bash
export PATH := /usr/local/go/bin:$(PATH)
export CGO_ENABLED := 0
GO ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
DATA ?= /var/lib/paddock
# Go test timeout for the whole suite (CI allows 45 minutes end to end).
TEST_TIMEOUT ?= 30m

.PHONY: all deps deps-kube guest build console run test test-kube test-hostile-gvisor test-short bench bench-templates fuzz vet tidy fmt clean sdk-models sdk-test

all: build

deps:
	@scripts/deps.sh

# What the tests need besides: the kube runtime's cluster (packages and the
# Kubernetes binaries, built once into /var/cache/paddock and reused).
deps-kube:
	@scripts/deps.sh kube

GUEST := internal/guestbin/bin/paddock-guest

# The guest agent is built first and embedded (see internal/guestbin).
guest:
	$(GO) build -trimpath -ldflags '-s -w' -o $(GUEST) ./cmd/paddock-guest

build: guest
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/paddock ./cmd/paddock

# The web console (web/console → internal/console/assets, committed, so a
# plain go build embeds it): rebuild it after changing web/console. Needs
# Node.js 20 and npm; TestAssetsReproducible checks the committed output.
console:
	cd web/console && npm ci --no-audit --no-fund --ignore-scripts && node build.mjs

run: deps build
	./bin/paddock serve --data $(DATA)

# The whole suite: unit, integration (root: real sandboxes), CLI scripts,
# fuzz seed corpora; the hostile suite runs there on the native runtime.
# Then its gVisor pass (issue 18 item 5): every case whose outcome the
# runtime decides (selected, less the skipped), with every sandbox on
# gVisor. The cases it leaves out attack the control plane only; test/hostile's controlPlaneCases gives
# each one's reason and TestGVisorPassCoversEveryCase fails on a case in
# neither list. A case that cannot apply on gVisor skips, saying why.
HOSTILE_GVISOR_CASES := ^(TestKernel|TestFS|TestNet|TestPort|TestResource|TestInheritedDescriptors|TestInotify|TestSecretNeverInSandbox|TestBrowser|TestAuditSandboxCannotReachLog|TestTmpfsLayersCounted|TestLoad|TestFault|TestDataDirPermissions|TestTwoServersOneHost|TestGVisorPassCoversEveryCase)
HOSTILE_GVISOR_SKIP := ^(TestNetProxySlotsPerTenant|TestNetDNSInFlightPerTenant)$$
test: deps guest
	$(GO) vet ./...
	$(GO) mod tidy -diff
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...

# The kube runtime's cluster tests (docs/kubernetes.md): the Kubernetes
# binaries, then a real single-node cluster. Opt-in: see kubetest.Get.
test-kube: deps-kube guest
	PADDOCK_KUBE_TESTS=1 $(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./internal/runtime/kube/...

# The runtime-dependent hostile cases on gVisor (HOSTILE_GVISOR_CASES):
# kept out of make test until a clean CI-kind run shows it fits the
# 45-minute budget (about 30 minutes on a loaded machine).
test-hostile-gvisor: deps guest
	PADDOCK_HOSTILE_RUNTIME=gvisor $(GO) test -count=1 -timeout $(TEST_TIMEOUT) -run '$(HOSTILE_GVISOR_CASES)' -skip '$(HOSTILE_GVISOR_SKIP)' ./test/hostile/

test-short: guest
	$(GO) test -count=1 -short ./...

bench: build
	./bin/paddock bench --embedded

# Issue 15's three image-template benchmarks side by side in one run, each
# beside its reference (skopeo+umoci, the host template, buildah bud). They
# start Debian's docker-registry, so they are Go benchmarks, not paddock
# bench scenarios (docs/templates.md, "Performance"). Root; one package at
# a time so they do not measure each other.
bench-templates: guest
	uptime
	$(GO) test -count=1 -p 1 -run '^$$' -benchtime 5x -timeout 50m \
		-bench 'BenchmarkPullUnpack|BenchmarkCreateExecDeleteImage|BenchmarkCachedRebuild' \
		./internal/oci/ ./internal/sandbox/ ./internal/dockerfile/
	uptime

vet:
	$(GO) vet ./...

# go.mod lists exactly what the code imports, direct dependencies apart
# from the indirect ones; `make test` fails when it does not.
tidy:
	$(GO) mod tidy

fmt:
	gofmt -w $$(git ls-files '*.go')

# The SDKs' wire models (from internal/api/openapi) and the sync Python
# client (from the async one); CI fails when either is stale.
sdk-models:
	/usr/bin/python3 sdk/codegen/generate.py
	/usr/bin/python3 sdk/python/tools/unasync.py

# The Python and TypeScript SDK suites against a real paddock serve (part of
# make test too).
sdk-test: deps guest
	$(GO) test -count=1 -v ./sdk/sdktest/

clean:
	rm -rf bin $(GUEST)
