#!/usr/bin/env bash
# Makes `sandbox.driver: docker` runnable on this machine: Docker from Debian's packages,
# the daemon started, and the local base image built. No image registry is reachable, so
# the base image is made here: a minimal Debian root file system (debootstrap, from the
# same Debian mirror apt uses, same release as the host, so the host's `node`, mounted
# read-only into containers, finds the C library it was built for; ~1 min once), imported
# as coder-eval-base:local. When debootstrap cannot run, a busybox image with the host's
# C and C++ runtime libraries copied in (seconds; but no bash, which some agent tools
# expect) is made instead.
#
# CODER_EVAL_DOCKER_BASE=busybox skips debootstrap and makes the busybox image directly.
#
# Idempotent: each step is skipped when already done. Exits 0 with a message when Docker
# cannot run here; the driver: docker tests then skip, saying why.
set -uo pipefail

IMAGE=${CODER_EVAL_DOCKER_IMAGE:-coder-eval-base:local}
LOG=${CODER_EVAL_DOCKERD_LOG:-/tmp/coder-eval-dockerd.log}

say() { echo "docker-setup: $*" >&2; }
give_up() {
    say "$*; driver: docker is not available here (its tests skip)"
    exit 0
}

as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else return 1; fi
}

apt_install() {
    local missing=()
    for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
    [ ${#missing[@]} -eq 0 ] && return 0
    as_root apt-get update -qq >/dev/null 2>&1 || true
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null
}

# 1. Docker itself (dockerd, containerd, runc, docker-init) and the image-making tools.
command -v dockerd >/dev/null || apt_install docker.io || give_up "could not install docker.io"
apt_install debootstrap busybox-static || say "could not install debootstrap/busybox-static"

# 2. The daemon.
if ! docker info >/dev/null 2>&1; then
    say "starting dockerd (log: $LOG)"
    as_root sh -c "nohup dockerd >'$LOG' 2>&1 &" || give_up "could not start dockerd"
    for _ in $(seq 1 60); do
        docker info >/dev/null 2>&1 && break
        sleep 0.5
    done
    docker info >/dev/null 2>&1 || give_up "dockerd did not come up (see $LOG)"
fi

# 3. The base image.
if docker image inspect "$IMAGE" >/dev/null 2>&1; then
    say "$IMAGE is here"
    exit 0
fi

mirror() {
    # The first Debian URI apt is configured with (deb822 or one-line format).
    local uri
    uri=$(grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}' | grep -m1 '/debian/\?$')
    [ -n "$uri" ] || uri=$(grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list |
        awk '{print $2}' | grep -m1 '/debian/\?$')
    echo "${uri:-http://deb.debian.org/debian}"
}

rootfs=$(mktemp -d /tmp/coder-eval-rootfs.XXXXXX)
trap 'as_root rm -rf "$rootfs"' EXIT
started=$(date +%s)
suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
kind=debian
if [ "${CODER_EVAL_DOCKER_BASE:-debian}" = busybox ] || ! command -v debootstrap >/dev/null ||
    ! as_root debootstrap --variant=minbase "$suite" "$rootfs" "$(mirror)" >"$rootfs.log" 2>&1; then
    [ "${CODER_EVAL_DOCKER_BASE:-debian}" = busybox ] ||
        say "debootstrap failed (log: $rootfs.log); making a busybox image instead"
    kind=busybox
    as_root rm -rf "$rootfs" && mkdir -p "$rootfs"
    busybox=$(command -v busybox) || give_up "neither debootstrap nor busybox works"
    mkdir -p "$rootfs"/{bin,etc,tmp,root,usr/bin,usr/local/bin}
    chmod 1777 "$rootfs/tmp"
    cp "$busybox" "$rootfs/bin/busybox"
    for app in $("$busybox" --list); do
        [ -e "$rootfs/bin/$app" ] || ln -s busybox "$rootfs/bin/$app"
    done
    echo "root:x:0:0:root:/root:/bin/sh" >"$rootfs/etc/passwd"
    echo "root:x:0:" >"$rootfs/etc/group"
    # The host's node and the agent CLIs' native binaries (Claude Code is one) need the
    # host's C and C++ runtime (and loader) at the same paths.
    libs=$(dpkg -L libc6 libgcc-s1 libstdc++6 2>/dev/null | grep -E '\.so(\.[0-9]+)*$')
    if node=$(command -v node); then libs="$libs $(ldd "$node" | grep -o '/[^ ]*')"; fi
    for lib in $libs; do [ -f "$lib" ] && cp -L --parents "$lib" "$rootfs"; done
fi
say "importing $IMAGE ($kind root file system)"
tar -C "$rootfs" -c . | docker import \
    -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    -c 'CMD ["/bin/sh"]' - "$IMAGE" >/dev/null || give_up "docker import failed"
say "$IMAGE made in $(($(date +%s) - started)) s"
