// Package template provides the read-only root filesystems sandboxes start
// from, kept under DATA/templates/<name>/.
//
// "host" (the default) is instant and offline: a small skeleton root with a
// synthesized /etc, plus the host's /usr (and /bin, /lib*, /sbin where the
// host is not merged-usr) layered in read-only. The host's own /etc secrets,
// /root, /home, /var and /run never appear. "debian" and other built
// templates are full root filesystems made by mmdebstrap.
package template
