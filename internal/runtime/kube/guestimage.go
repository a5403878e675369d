package kube

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/paddockhq/paddock/internal/runtime/kube/image"
)

// PushGuestImage pushes an image holding only the guest binary (at
// /paddock-guest) to repo and returns its reference pinned by digest —
// Options.GuestImage. The sandbox's own image is never modified: the
// init container copies the guest from this one.
func PushGuestImage(ctx context.Context, repo string, guest []byte, insecure bool, opts ...remote.Option) (string, error) {
	if len(guest) == 0 {
		return "", errors.New("kube: no guest binary (build with `make build`, which embeds it)")
	}
	img, err := image.Build([]image.File{{Path: "paddock-guest", Mode: 0o555, Data: guest}},
		v1.Config{Entrypoint: []string{"/paddock-guest"}})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(guest)
	return image.Push(ctx, repo+":"+hex.EncodeToString(sum[:8]), img, insecure, opts...)
}
