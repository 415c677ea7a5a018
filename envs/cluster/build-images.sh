#!/usr/bin/env bash
# Build the OCI images the cluster imports (no registry is reachable here):
#   localhost/podnet-tools:<hash>  Debian bookworm minbase (main + non-free) + the tools in images/tools.packages,
#                                  entrypoint `sleep infinity`
#   localhost/podnet-pause:<hash>  a static Go program (go/pause) used as the pod sandbox image
# Each is cached as an OCI-layout tarball in $CACHE_DIR/images keyed by a hash of its recipe,
# so a warm machine skips the build. Prints shell assignments on stdout:
#   TOOLS_REF= TOOLS_TAR= PAUSE_REF= PAUSE_TAR=
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ensure_packages # debootstrap, umoci (also when run alone: make cluster-build)
IMG_CACHE="$CACHE_DIR/images"
mkdir -p "$IMG_CACHE"
# Bump when the way an image is built changes (the cache key is a hash of the recipe:
# this version, the package list / pause source, the suite and the entrypoint).
RECIPE_VERSION=3
SUITE=bookworm
COMPONENTS=main,non-free # netperf is in non-free

mirror() {
    local m
    m=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
    [[ -z $m ]] && m=$(awk '$1=="deb" && $0 !~ /security/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
    echo "${m:-http://deb.debian.org/debian}"
}

packages() { grep -v '^[[:space:]]*#' "$CLUSTER_DIR/images/tools.packages" | awk 'NF {print $1}' | paste -sd, -; }

# pack_oci ROOTFS IMAGE_NAME TAG OUT_TAR ENTRYPOINT...
pack_oci() {
    local rootfs=$1 name=$2 tag=$3 out=$4
    shift 4
    local w
    w=$(mktemp -d "$IMG_CACHE/.pack.XXXXXX")
    umoci init --layout "$w/oci" >/dev/null
    umoci new --image "$w/oci:$tag" >/dev/null
    umoci unpack --image "$w/oci:$tag" "$w/bundle" >/dev/null
    cp -a "$rootfs/." "$w/bundle/rootfs/"
    umoci repack --image "$w/oci:$tag" "$w/bundle" >/dev/null
    local args=()
    for e in "$@"; do args+=(--config.entrypoint "$e"); done
    umoci config --image "$w/oci:$tag" "${args[@]}" \
        --config.workingdir / --config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        --author podnet --os linux --architecture amd64 >/dev/null
    umoci gc --layout "$w/oci" >/dev/null
    tar -C "$w/oci" -cf "$out.tmp" .
    mv -f "$out.tmp" "$out"
    rm -rf "$w"
}

# ---- pause image ----
pause_hash=$({ echo "recipe=$RECIPE_VERSION entrypoint=/pause"; cat "$CLUSTER_DIR/go/pause/main.go" "$CLUSTER_DIR/go/pause/go.mod"; } | sha256sum | cut -c1-12)
PAUSE_REF="localhost/podnet-pause:$pause_hash"
PAUSE_TAR="$IMG_CACHE/podnet-pause-$pause_hash.tar"
if [[ ! -s $PAUSE_TAR ]]; then
    log "building pause image $PAUSE_REF"
    [[ -x $GO ]] || GO=$(command -v go || die "Go toolchain not found; needed for the pause image")
    w=$(mktemp -d "$IMG_CACHE/.pause.XXXXXX")
    mkdir -p "$w/rootfs"
    (cd "$CLUSTER_DIR/go/pause" && CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-buildvcs=false "$GO" build -trimpath -ldflags "-s -w" -o "$w/rootfs/pause" .)
    pack_oci "$w/rootfs" podnet-pause "$pause_hash" "$PAUSE_TAR" /pause
    rm -rf "$w"
else
    log "pause image cached ($PAUSE_TAR)"
fi

# ---- tools image ----
tools_hash=$({ echo "recipe=$RECIPE_VERSION suite=$SUITE components=$COMPONENTS variant=minbase entrypoint=sleep infinity"; packages; } | sha256sum | cut -c1-12)
TOOLS_REF="localhost/podnet-tools:$tools_hash"
TOOLS_TAR="$IMG_CACHE/podnet-tools-$tools_hash.tar"
if [[ ! -s $TOOLS_TAR ]]; then
    command -v debootstrap >/dev/null || die "debootstrap missing (apt-get install debootstrap)"
    w=$(mktemp -d "$IMG_CACHE/.tools.XXXXXX")
    # debootstrap mounts proc/sys inside the target; never leave them behind
    cleanup_tools() {
        local m
        for m in $(awk -v p="$w/" 'index($2, p) == 1 {print $2}' /proc/mounts | sort -r); do umount -l "$m" 2>/dev/null || true; done
        rm -rf "$w"
    }
    trap cleanup_tools EXIT
    log "building pod test image $TOOLS_REF (debootstrap minbase bookworm + $(packages)); ~2-3 min; log: $IMG_CACHE/debootstrap.log"
    debootstrap --variant=minbase --components="$COMPONENTS" --include="$(packages)" "$SUITE" "$w/rootfs" "$(mirror)" >"$IMG_CACHE/debootstrap.log" 2>&1 || {
        tail -20 "$IMG_CACHE/debootstrap.log" >&2
        die "debootstrap failed (see $IMG_CACHE/debootstrap.log)"
    }
    r="$w/rootfs"
    rm -rf "$r"/usr/share/doc/* "$r"/usr/share/man/* "$r"/usr/share/info/* "$r"/usr/share/locale/* \
        "$r"/var/cache/apt/*.bin "$r"/var/cache/apt/archives/*.deb "$r"/var/lib/apt/lists/* \
        "$r"/var/log/*.log "$r"/var/cache/debconf/*-old "$r"/debootstrap
    # nginx creates its compiled-in temp dirs at start even when the config moves them: have them
    # in the image so nginx also starts with a read-only root filesystem
    mkdir -p "$r"/var/lib/nginx/{body,fastcgi,proxy,scgi,uwsgi}
    echo "podnet-tools $tools_hash" >"$r/etc/podnet-image"
    pack_oci "$r" podnet-tools "$tools_hash" "$TOOLS_TAR" sleep infinity
    cleanup_tools
    trap - EXIT
    log "pod test image built: $(du -h "$TOOLS_TAR" | cut -f1)"
else
    log "pod test image cached ($TOOLS_TAR)"
fi

printf 'TOOLS_REF=%q\nTOOLS_TAR=%q\nPAUSE_REF=%q\nPAUSE_TAR=%q\n' "$TOOLS_REF" "$TOOLS_TAR" "$PAUSE_REF" "$PAUSE_TAR"
