# Embedded multi-node Kubernetes cluster (see envs/cluster/README.md).
# Included from the top-level Makefile; paths are relative to the repo root.
#   make cluster-up [NODES=2] [CNI=<a mode of envs/cluster/modes.tsv: make cluster-modes>] [PROXY=iptables|nftables]
#                   [LINK_RATE=1gbit] [ZONES=zone-a,zone-a,zone-b] [POOLS=...] [EDGE_TUNNEL=wireguard] [CLUSTER_ID=1]
#   make cluster-status
#   make cluster-modes         (the CNI modes: envs/cluster/modes.tsv)
#   make cluster-down
#   make cluster-test          (pytest -m cluster tests/integration against the running cluster)
#   make cluster-check-clean   (after cluster-down: verify nothing is left behind)
#   make compare [CAMPAIGN=config/campaigns/seed-003.yaml] [BUDGET=36m]   (the experiment under each variant, one comparison)

NODES ?= 2
CNI ?= bridge
PROXY ?= iptables
LINK_RATE ?=
EDGE_TUNNEL ?=
ZONES ?= zone-a,zone-a,zone-b
POOLS ?= pool-a,pool-a,pool-b
K8S_VERSION ?= v1.33.13
FLANNEL_VERSION ?= v0.28.10
CALICO_VERSION ?= v1.11.0-cni-plugin.0.20250813170300-a0db560f0520
CLUSTER_PYTHON ?= .venv/bin/python
# 0: the embedded cluster; 1..9: another one beside it (.cluster-<id>, podnet<id>-node-N; lib.sh)
CLUSTER_ID ?= 0

CLUSTER_ENV = NODES='$(NODES)' CNI='$(CNI)' PROXY='$(PROXY)' LINK_RATE='$(LINK_RATE)' EDGE_TUNNEL='$(EDGE_TUNNEL)' ZONES='$(ZONES)' POOLS='$(POOLS)' K8S_VERSION='$(K8S_VERSION)' FLANNEL_VERSION='$(FLANNEL_VERSION)' CALICO_VERSION='$(CALICO_VERSION)' DAEMON_CPU_WEIGHT='$(DAEMON_CPU_WEIGHT)' CLUSTER_ID='$(CLUSTER_ID)'

# the CNI modes and the CI matrix: envs/cluster/modes.tsv (one row per mode)
CNI_MODES := $(shell bash envs/cluster/modes.sh modes)

.PHONY: cluster-up cluster-down cluster-status cluster-modes cluster-test cluster-check-clean cluster-build cluster-ci compare compare-ci

cluster-up:
	@$(CLUSTER_ENV) bash envs/cluster/up.sh

cluster-down:
	@$(CLUSTER_ENV) bash envs/cluster/down.sh

cluster-status:
	@$(CLUSTER_ENV) bash envs/cluster/status.sh

cluster-modes:
	@echo "make cluster-up CNI=<mode>, one of: $(CNI_MODES) (envs/cluster/modes.tsv)"
	@grep -v '^#' envs/cluster/modes.tsv | column -t -s "$$(printf '\t')"

# build and cache the Kubernetes binaries and images only (no cluster)
cluster-build:
	@$(CLUSTER_ENV) bash envs/cluster/build-k8s.sh
	@$(CLUSTER_ENV) bash envs/cluster/build-flannel.sh
	@$(CLUSTER_ENV) bash envs/cluster/build-images.sh >/dev/null

cluster-test:
	@$(CLUSTER_PYTHON) -c 'import kubernetes, pytest' 2>/dev/null || { echo "cluster-test needs the 'kubernetes' and 'pytest' packages in $(CLUSTER_PYTHON)"; exit 1; }
	$(CLUSTER_PYTHON) -m pytest -m cluster tests/integration -v

cluster-check-clean:
	@bash envs/cluster/check-clean.sh

# CI: up, integration tests, down and check-clean (with the root-namespace test), for each
# CNI:NODES[:PROXY[:EDGE_TUNNEL[:ZONES]]] in CLUSTER_CI_MATRIX (ZONES with / for ,); default: every
# mode's legs (column ci of modes.tsv)
CLUSTER_CI_MATRIX ?= $(shell bash envs/cluster/modes.sh ci-matrix)
CLUSTER_CI_TESTS ?= tests/integration
CLUSTER_CI_MORE_TESTS ?= tests/integration/test_cluster.py
cluster-ci:
	@CLUSTER_CI_MATRIX='$(CLUSTER_CI_MATRIX)' CLUSTER_CI_TESTS='$(CLUSTER_CI_TESTS)' CLUSTER_CI_MORE_TESTS='$(CLUSTER_CI_MORE_TESTS)' CLUSTER_PYTHON='$(CLUSTER_PYTHON)' LINK_RATE='$(LINK_RATE)' ZONES='$(ZONES)' POOLS='$(POOLS)' K8S_VERSION='$(K8S_VERSION)' FLANNEL_VERSION='$(FLANNEL_VERSION)' bash envs/cluster/ci.sh

# A comparison campaign: the campaign's experiment under each variant (clusters up, launch, down,
# under the cluster lock), then one comparison through the pipeline. Resumes what is missing.
# CPU_HOG=1: one busy process beside the launches (does the comparison hold on a loaded machine?)
# BUDGET=20m: this run's launch.adaptive.budget. Default: seed 003's CNI ranking side by side (~40 min);
# the several-hour bridge/flannel campaign of the main experiment is CAMPAIGN=config/campaigns/cni.yaml
CAMPAIGN ?= config/campaigns/seed-003.yaml
# (floor-tools: the main experiment interleaves the noise floor, launch.floor)
compare: floor-tools
	$(CLUSTER_PYTHON) -m podnet.launch.campaign run $(CAMPAIGN) --cores $(or $(CORES),2) $(if $(CPU_HOG),--cpu-hog $(CPU_HOG)) $(if $(BUDGET),--budget $(BUDGET))

# CI-sized campaign (quick experiment cut down; bridge, flannel-vxlan, flannel-host-gw, one nftables
# variant); like every campaign it resumes (a fresh checkout launches everything), then checks
# the published comparison and that the cluster is gone
compare-ci:
	$(CLUSTER_PYTHON) -m podnet.launch.campaign run config/campaigns/cni-ci.yaml --cores $(or $(CORES),2)
	PODNET_REQUIRE_CLUSTER=1 $(CLUSTER_PYTHON) -m pytest -q -p no:cacheprovider tests/integration/test_campaign.py
	bash envs/cluster/check-clean.sh
