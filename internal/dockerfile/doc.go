// Package dockerfile builds Dockerfiles into image templates.
//
// Parsing is buildkit's own (frontend/dockerfile/parser and
// instructions, pinned), so the grammar, escapes, heredoc detection and
// error positions are Docker's. Execution is Paddock's: FROM resolves
// through a BaseResolver (an earlier stage, a template — imported images
// included — or a registry reference, or scratch); RUN goes through a
// Runner over the layer stack so far (on the server, dockerfile/sandboxrunner:
// a Paddock sandbox whose root is that stack; in this package's tests,
// the namespace runner in dockerfile/nsrunner); COPY and ADD assemble a layer from the build
// context (.dockerignore honoured) or another stage, and ADD of a URL
// only through a Fetcher the server binds to its egress policy. Every
// layer goes through the layer store's hardened extractor, and every step
// is cached by a key chained from its base's identity and the step's
// full input (its text after expansion, the environment, the working
// directory, the user, and the content of copied files), so an
// unchanged rebuild only reads its cache index.
package dockerfile
