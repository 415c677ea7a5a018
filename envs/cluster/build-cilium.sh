#!/usr/bin/env bash
# Build Cilium from the Go module proxy and cache it by version:
#   $CACHE_DIR/cilium/$CILIUM_VERSION/bin/{cilium-agent,cilium-cni,cilium-operator-generic,cilium-dbg}
#   $CACHE_DIR/cilium/$CILIUM_VERSION/bpf/   the datapath's C sources; the agent compiles them with
#                                           `clang` at start and reads them from <lib-dir>/bpf
# A warm cache (binaries + stamp present) is a no-op.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CILIUM_VERSION="${CILIUM_VERSION:-v1.15.19}"
CILIUM_DIR="$CACHE_DIR/cilium/$CILIUM_VERSION"
CILIUM_BIN="$CILIUM_DIR/bin"
CILIUM_BINS=(cilium-agent cilium-cni cilium-operator-generic cilium-dbg)

stamp="$CILIUM_BIN/.complete"
cached=1
for b in "${CILIUM_BINS[@]}"; do [[ -x $CILIUM_BIN/$b ]] || cached=0; done
if [[ -f $stamp && $cached == 1 && -f $CILIUM_DIR/bpf/bpf_lxc.c ]]; then
    log "cilium $CILIUM_VERSION cached in $CILIUM_DIR"
    exit 0
fi
[[ -x $GO ]] || GO=$(command -v go || true)
[[ -n $GO && -x $GO ]] || die "Go toolchain not found (looked at /usr/local/go/bin/go and PATH); needed to build cilium $CILIUM_VERSION"
# Only 1.15.x is known to build here: 1.20.x pins gobgp/v4 and mcs-api versions the proxy refuses (403).
[[ $CILIUM_VERSION =~ ^v1\.[0-9]+\.[0-9]+$ ]] || die "CILIUM_VERSION must look like v1.15.19 (got $CILIUM_VERSION)"

work="$CILIUM_DIR"
mkdir -p "$work"
log "building cilium $CILIUM_VERSION from the Go module proxy (cold: ~8 min on 2 cores with other builds running; log: $work/build.log)"
t0=$(date +%s)
# Cilium's go.mod has `replace` lines (metallb, controller-tools) that only apply in the main module,
# and the binaries are main packages of that module, so `go install cilium@version` cannot build
# them. Build instead in a throwaway writable copy of the module (it is the main module there, with
# Cilium's own go.mod/go.sum, so the dependency versions are exactly the released ones). The zip's
# vendor/ holds only modules.txt (module zips drop vendored code): remove it and use the proxy.
# Cilium's release build is CGO_ENABLED=0 as well (Makefile.defs: GO_BUILD = CGO_ENABLED=0 go build).
export GOTOOLCHAIN=local GOFLAGS="${GOFLAGS:--buildvcs=false}" CGO_ENABLED=0
cmod=$("$GO" mod download -json "github.com/cilium/cilium@$CILIUM_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[[ -f $cmod/go.mod && -f $cmod/daemon/main.go && -d $cmod/bpf ]] ||
    die "could not download github.com/cilium/cilium@$CILIUM_VERSION from the Go module proxy"
src="$work/src"
rm -rf "$src"
cp -r "$cmod" "$src"
chmod -R u+w "$src"
rm -rf "$src/vendor"

# One source change, for this kernel: it has no loadable modules (CONFIG_MODULES=n), so there is no
# /proc/modules, and the agent's kernel-module manager fails its start hook on it ("failed to retrieve
# loaded modules names: ... open /proc/modules: no such file or directory"), which stops the agent.
# Treat a missing /proc/modules as "no module loaded"; the callers (iptables manager) then try
# `modprobe`, and a failure there is a warning (ip_tables), ignored (xt_socket in tunnel mode) or,
# with IPv6 off, a debug message (ip6_tables).
modfile="$src/pkg/datapath/linux/modules/modules_linux.go"
if grep -q 'fModules, err := os.Open(loadedModulesFilepath)' "$modfile"; then
    sed -i '/fModules, err := os.Open(loadedModulesFilepath)/a\
\tif errors.Is(err, os.ErrNotExist) {\
\t\treturn nil, nil // podnet: kernel without loadable modules, no /proc/modules\
\t}' "$modfile"
    grep -q 'podnet: kernel without loadable modules' "$modfile" || die "patching $modfile failed"
else
    warn "cilium $CILIUM_VERSION: /proc/modules patch point not found in $modfile; building unpatched"
fi

# The version string and the datapath hash the Makefile would set (Makefile.defs: ciliumVersion,
# loader.DatapathSHA256 = sha256 over the sorted bpf/ files minus bpf/.gitignore).
datapath_sha=$(cd "$cmod" && find bpf -type f ! -path bpf/.gitignore | LC_ALL=C sort | xargs cat | sha256sum | awk '{print $1}')
ldflags="-s -w -X 'github.com/cilium/cilium/pkg/version.ciliumVersion=${CILIUM_VERSION#v}'"
ldflags+=" -X 'github.com/cilium/cilium/pkg/datapath/loader.DatapathSHA256=$datapath_sha'"

tmpbin="$work/bin.tmp"
rm -rf "$tmpbin"
mkdir -p "$tmpbin"
: >"$work/build.log"
# name package tags (tags as in the Makefiles: osusergo everywhere; the generic operator adds the
# ipam_provider_operator IPAM provider only, no cloud SDKs)
while read -r name pkg tags; do
    log "  go build $pkg -> $name"
    echo "== $name ($pkg, tags $tags)" >>"$work/build.log"
    (cd "$src" && "$GO" build -mod=readonly -trimpath -tags "$tags" -ldflags "$ldflags" -o "$tmpbin/$name" "$pkg") \
        >>"$work/build.log" 2>&1 || {
        tail -20 "$work/build.log" >&2
        die "building cilium $name ($pkg) failed (see $work/build.log)"
    }
done <<'EOF'
cilium-agent ./daemon osusergo
cilium-cni ./plugins/cilium-cni osusergo
cilium-operator-generic ./operator osusergo,ipam_provider_operator
cilium-dbg ./cilium-dbg osusergo
EOF

# The datapath sources, pristine, from the module (the agent writes generated headers under
# <lib-dir>/bpf, so give each agent its own writable copy of this directory).
rm -rf "$CILIUM_DIR/bpf.tmp"
cp -r "$cmod/bpf" "$CILIUM_DIR/bpf.tmp"
chmod -R u+w "$CILIUM_DIR/bpf.tmp"
rm -rf "$CILIUM_DIR/bpf"
mv "$CILIUM_DIR/bpf.tmp" "$CILIUM_DIR/bpf"

mkdir -p "$CILIUM_BIN"
for b in "${CILIUM_BINS[@]}"; do mv -f "$tmpbin/$b" "$CILIUM_BIN/$b"; done
rmdir "$tmpbin"
rm -rf "$src"
command -v clang >/dev/null || warn "no \`clang\` in PATH: cilium-agent runs \`clang\` (>= 10; Debian: clang-16, link it as clang) to compile its datapath"
command -v bpftool >/dev/null || warn "no bpftool in PATH: cilium-agent runs \`bpftool feature probe\` at start (Debian package bpftool)"
echo "$CILIUM_VERSION built $(date -u +%FT%TZ) in $(($(date +%s) - t0)) s; patched: missing /proc/modules tolerated; datapath sha256 $datapath_sha" >"$stamp"
log "cilium $CILIUM_VERSION built in $(($(date +%s) - t0)) s -> $CILIUM_BIN (+ $CILIUM_DIR/bpf)"
