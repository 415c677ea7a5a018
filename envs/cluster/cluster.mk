# Embedded multi-node Kubernetes cluster (see envs/cluster/README.md).
# Included from the top-level Makefile; paths are relative to the repo root.
#   make cluster-up [NODES=2] [CNI=bridge|vxlan] [LINK_RATE=1gbit] [ZONES=zone-a,zone-a,zone-b] [POOLS=...]
#   make cluster-status
#   make cluster-down
#   make cluster-test          (pytest -m cluster tests/integration against the running cluster)
#   make cluster-check-clean   (after cluster-down: verify nothing is left behind)

NODES ?= 2
CNI ?= bridge
LINK_RATE ?=
ZONES ?= zone-a,zone-a,zone-b
POOLS ?= pool-a,pool-a,pool-b
K8S_VERSION ?= v1.33.13
CLUSTER_PYTHON ?= .venv/bin/python

CLUSTER_ENV = NODES='$(NODES)' CNI='$(CNI)' LINK_RATE='$(LINK_RATE)' ZONES='$(ZONES)' POOLS='$(POOLS)' K8S_VERSION='$(K8S_VERSION)'

.PHONY: cluster-up cluster-down cluster-status cluster-test cluster-check-clean cluster-build cluster-ci

cluster-up:
	@$(CLUSTER_ENV) bash envs/cluster/up.sh

cluster-down:
	@$(CLUSTER_ENV) bash envs/cluster/down.sh

cluster-status:
	@$(CLUSTER_ENV) bash envs/cluster/status.sh

# build and cache the Kubernetes binaries and images only (no cluster)
cluster-build:
	@$(CLUSTER_ENV) bash envs/cluster/build-k8s.sh
	@$(CLUSTER_ENV) bash envs/cluster/build-images.sh >/dev/null

cluster-test:
	@$(CLUSTER_PYTHON) -c 'import kubernetes, pytest' 2>/dev/null || { echo "cluster-test needs the 'kubernetes' and 'pytest' packages in $(CLUSTER_PYTHON)"; exit 1; }
	$(CLUSTER_PYTHON) -m pytest -m cluster tests/integration -v

cluster-check-clean:
	@bash envs/cluster/check-clean.sh

# CI: up, integration tests, down (always) and check-clean, for each CNI:NODES in CLUSTER_CI_MATRIX
CLUSTER_CI_MATRIX ?= bridge:2 vxlan:3
CLUSTER_CI_TESTS ?= tests/integration
cluster-ci:
	@CLUSTER_CI_MATRIX='$(CLUSTER_CI_MATRIX)' CLUSTER_CI_TESTS='$(CLUSTER_CI_TESTS)' CLUSTER_PYTHON='$(CLUSTER_PYTHON)' LINK_RATE='$(LINK_RATE)' ZONES='$(ZONES)' POOLS='$(POOLS)' K8S_VERSION='$(K8S_VERSION)' bash envs/cluster/ci.sh
