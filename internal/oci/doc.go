// Package oci moves container images between registries, archives and
// Paddock's layer store, with github.com/google/go-containerregistry as
// the registry client.
//
// Pull resolves a reference (tag or digest; a multi-arch index resolves to
// the host's platform), checks manifest and layer media types and counts,
// and Unpack streams each missing layer — gzip, zstd or plain — through
// digest and size verification and decompression into layers.Store, which
// verifies the diff id. Credentials come from a CredentialFunc (a Docker
// config.json file or the server's secret store) and are never logged or
// stored with the image. Plain HTTP is refused except for registries
// named insecure, every request has connect, header and stall timeouts.
//
// OpenArchive reads `docker save` tarballs, OCI image layouts and
// oci-archives; WriteOCIArchive and Push send an image (for example a
// template rebuilt from the store by StoreImage) back out.
package oci
