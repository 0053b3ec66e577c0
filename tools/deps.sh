#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install every Debian package the build, demo and tests need. Idempotent;
# quick when all is present. Needs root (apt-get).
set -e

PKGS="make gcc libc6-dev kmod cpio xz-utils zstd
linux-headers-6.1.0-56-amd64 linux-image-6.1.0-56-amd64
linux-headers-6.12.117+deb12-amd64 linux-image-6.12.117+deb12-amd64-unsigned
linux-source-6.12 sparse shellcheck flex bison bc libelf-dev
qemu-system-x86 busybox-static vde2
rdma-core ibverbs-utils libibverbs-dev libibumad-dev perftest
iproute2 iputils-ping ethtool tcpdump tshark iperf3
opensm infiniband-diags
clang libclang-rt-14-dev
network-manager dbus ifupdown dkms"

missing=
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages:$missing (run as root to install)" >&2
	exit 1
fi
echo "deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
# The host never boots these kernels: skip initramfs generation for them.
mkdir -p /etc/initramfs-tools/conf.d
apt-get update -qq
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
# Services (opensm's, NetworkManager's, ifupdown's networking) must not
# start on the host: only guests run them, in their own overlay.
if [ ! -e /usr/sbin/policy-rc.d ]; then
	printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
	chmod 755 /usr/sbin/policy-rc.d
	trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
# shellcheck disable=SC2086 # package names are words
apt-get install -y -qq --no-install-recommends $missing >/dev/null
# policy-rc.d kept them from starting now, not from starting at the next
# boot: the network services installed here are the guests' alone.
for p in $missing; do
	case $p in
	network-manager) units="NetworkManager NetworkManager-wait-online NetworkManager-dispatcher" ;;
	ifupdown) units=networking ;;
	opensm) units=opensm ;;
	*) continue ;;
	esac
	for u in $units; do
		systemctl disable "$u.service" >/dev/null 2>&1 || true
	done
done
