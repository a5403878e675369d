#!/bin/sh
# Runs internal/disk's tests under Debian's User-Mode Linux kernel (6.1,
# CONFIG_XFS_QUOTA=y), so the XFS quota tests also run on hosts whose own
# kernel cannot enforce XFS project quotas (they skip there).
#
# Needs root, `apt-get install user-mode-linux xfsprogs`. From the repo root:
#   internal/disk/testdata/uml/run.sh [test binary flags, e.g. -test.run=XFS]
set -eu
command -v linux.uml >/dev/null || { echo "linux.uml not found: apt-get install user-mode-linux" >&2; exit 2; }
loop_ko=$(ls /usr/lib/uml/modules/*/kernel/drivers/block/loop.ko | head -n 1)
work=$(mktemp -d /var/tmp/paddock-uml.XXXXXX) # /tmp is replaced by a tmpfs inside
trap 'rm -rf "$work"' EXIT
CGO_ENABLED=0 go test -c -o "$work/disk.test" ./internal/disk
CGO_ENABLED=0 go build -o "$work/insmod" ./internal/disk/testdata/uml/insmod.go
printf '%s\n' "$*" >"$work/args"
cat >"$work/init" <<INIT
#!/bin/sh
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t tmpfs tmp /tmp
: >"$work/result"
"$work/insmod" "$loop_ko" >>"$work/result" 2>&1
uname -r >>"$work/result"
"$work/disk.test" -test.v \$(cat "$work/args") >>"$work/result" 2>&1
echo "exit=\$?" >>"$work/result"
echo o >/proc/sysrq-trigger
INIT
chmod +x "$work/init"
timeout 1800 linux.uml root=/dev/root rootfstype=hostfs rootflags=/ rw mem=1500M \
	init="$work/init" con=null con0=null >"$work/boot.log" 2>&1 || true
if [ ! -s "$work/result" ]; then
	cat "$work/boot.log"
	exit 1
fi
cat "$work/result"
grep -qx 'exit=0' "$work/result"
