// Package durable holds the few file-system idioms the stores share:
// a write that survives a crash whole or not at all (temp file, fsync,
// rename, directory fsync), the directory fsync itself, and du-style
// usage that counts a hard-linked inode once. It is a leaf: it imports
// nothing of Paddock's.
package durable
