// Package template provides the read-only root filesystems sandboxes start
// from, kept under DATA/templates/<name>/ as rootfs/ plus template.json
// (written last: a template is ready exactly when template.json exists).
//
// "host" (the default) is instant and offline: a small skeleton root with a
// synthesized /etc, plus the host's /usr (and /bin, /lib*, /sbin where the
// host is not merged-usr) layered in read-only as Template.Overlays. Open
// rebuilds the skeleton when its stamp (builder version and a fingerprint
// of the host inputs) differs. The host's own /etc secrets (passwd, shadow,
// ssh, keys, machine-id, ...), /root, /home, /var and /run never appear:
// only an explicit allowlist of harmless /etc entries is copied.
//
// "debian" and other built templates are full root filesystems made by
// mmdebstrap (BuildDebian) in a staging directory and swapped into place
// atomically, so a failed or cancelled build leaves nothing behind.
//
// The package is Linux-only at run time; elsewhere Open and BuildDebian
// return errors wrapping errs.ErrUnsupported.
package template
