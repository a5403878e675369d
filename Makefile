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

.PHONY: all deps deps-kube guest build run test test-short bench fuzz vet fmt clean

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

run: deps build
	./bin/paddock serve --data $(DATA)

# The whole suite: unit, integration (root: real sandboxes), CLI scripts,
# fuzz seed corpora.
test: deps-kube guest
	$(GO) vet ./...
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...

test-short: guest
	$(GO) test -count=1 -short ./...

bench: build
	./bin/paddock bench --embedded

vet:
	$(GO) vet ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin $(GUEST)
