# podnet — two commands on a fresh machine:
#   make run    set up, start the embedded cluster, run the main experiment (config/config.yaml)
#               and the seed examples, publish figures under processed/
#   make test   set up, pass every test (the cluster tests bring the embedded cluster up and
#               take it down again, also on failure)
# Both install what they need first (idempotent); see README.md.

SHELL := /bin/bash
PY := .venv/bin/python
VENV_STAMP := .venv/.podnet-installed
empty :=
space := $(empty) $(empty)
EXAMPLES := seed-raven seed-cni-1gbe seed-qperf seed-cni-report
EXAMPLES_RE := $(subst $(space),|,$(EXAMPLES))
CORES ?= 2

.PHONY: browser setup run main examples seeds seeds-publish lab test unit pipeline-test nbval integration lint fmt clean-processed cleanup floor floor-tools flent-tools settle
RUN_NODES ?= 3

include envs/cluster/cluster.mk

# ---- set-up --------------------------------------------------------------------------
setup: $(VENV_STAMP) browser

# headless Chromium (Debian package) for the test that opens the HTML report; idempotent
browser:
	@command -v chromium >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; \
	  else echo "chromium missing: run 'make browser' as root (apt-get install chromium)"; fi; }

$(VENV_STAMP): envs/requirements.lock pyproject.toml
	@test -x $(PY) || python3 -m venv .venv
	$(PY) -m pip install -q --upgrade pip
	# one install with dependency resolution: a pin of the lock that contradicts pyproject.toml's
	# requirements (or another pin's) fails here, named by pip, instead of hiding behind --no-deps
	$(PY) -m pip install -q -r envs/requirements.lock -e '.[dev]'
	$(PY) -m pip check
	@touch $@

# ---- main job ------------------------------------------------------------------------
run: setup main examples

# the main experiment on the embedded cluster (3 nodes: two in zone-a/pool-a, one in zone-b/pool-b)
main: setup floor-tools
	$(MAKE) cluster-up NODES=$(RUN_NODES)
	.venv/bin/snakemake --cores $(CORES) --keep-going --configfile config/config.yaml

examples: setup
	@for ex in $(EXAMPLES); do \
	  echo "== example experiment $$ex"; \
	  .venv/bin/snakemake --cores $(CORES) --configfile config/examples/$$ex.yaml -q rules || exit 1; \
	done

# ---- the seed studies: one command, one report (issue 46) ----------------------------------
# each seed's campaign (config/campaigns/seed-00N.yaml) in turn, as `make compare CAMPAIGN=...` runs
# it: a campaign resumes (only missing runs launch; a published one re-publishes nothing), and a
# failed one does not stop the next (the target fails at the end, naming it; run it again to resume).
# Then every campaign's vs_seed_claims.csv and vs_seed.csv in one table with a verdict count per seed:
# processed/seeds/claims.csv, verdicts.csv, figures/<seed>.* (each published campaign's vs_seed
# figure, copied) and the seeds notebook (seeds.ipynb, .html), led by the counts, each seed's figure
# under its count (podnet.report.vs_seed.seeds); a campaign not published yet lists its claims from
# its file (config/campaigns/<seed>.yaml) as "not run yet" and has no figure. First a quiet check
# (podnet/launch/noise/quiet.py): a machine busy with other work (above the disturbed-run threshold
# over 5 s) stops here, saying what it measured, unless SEEDS_BUSY_OK=1
SEEDS := seed-000 seed-001 seed-002 seed-003 seed-004
SEEDS_PUBLISH = $(PY) -m podnet.report.vs_seed.seeds --out processed/seeds --campaigns config/campaigns \
  --notebook $(addprefix processed/,$(SEEDS))
seeds: setup floor-tools
	@$(PY) -m podnet.launch.noise.quiet --what "the seed campaigns" $(if $(filter 1,$(SEEDS_BUSY_OK)),--busy-ok)
	@failed=; for s in $(SEEDS); do \
	  echo "== seed campaign $$s"; \
	  $(CLUSTER_PYTHON) -m podnet.launch.campaign run config/campaigns/$$s.yaml --cores $(CORES) \
	    $(if $(BUDGET),--budget $(BUDGET)) || failed="$$failed $$s"; \
	done; \
	$(SEEDS_PUBLISH) || exit 1; \
	[ -z "$$failed" ] || { echo "seed campaigns that failed:$$failed (make seeds again resumes them)"; exit 1; }

# the publishing step alone: processed/seeds/ from the campaigns' processed/seed-00N/ as they are
seeds-publish: setup
	$(SEEDS_PUBLISH)

# ---- the noise floor: the config's tool commands between two bare network namespaces ----------
FLOOR_TOOLS := iperf3 iperf qperf iputils-ping
floor-tools:
	@command -v iperf3 >/dev/null && command -v iperf >/dev/null && command -v qperf >/dev/null && command -v ping >/dev/null || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(FLOOR_TOOLS) >/dev/null; }

# flent (main) and netperf (non-free; flent's tcp_nup runs it on the host) for
# benchmarks/flent_crosscheck.py: non-free through a private apt list and state directory, so the
# machine's own sources and package lists are left as they were
FLENT_APT := -o Dir::Etc::sourcelist=$(CURDIR)/.flent-apt/sources.list -o Dir::Etc::sourceparts=- \
  -o Dir::State::Lists=$(CURDIR)/.flent-apt/lists -o APT::Get::List-Cleanup=0
flent-tools:
	@command -v flent >/dev/null && command -v netperf >/dev/null || { \
	  mkdir -p .flent-apt/lists/partial && \
	  echo "deb http://deb.debian.org/debian bookworm main non-free" > .flent-apt/sources.list && \
	  apt-get $(FLENT_APT) update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get $(FLENT_APT) install -y -qq --no-install-recommends flent netperf >/dev/null; }
	@flent --version | head -1; netperf -V | head -1

FLOOR_CONFIG ?= config/config.yaml
FLOOR_TESTS ?= iperf3:tcp,ping:plain
FLOOR_REPEATS ?= 10
floor: setup floor-tools
	.venv/bin/podnet floor --config $(FLOOR_CONFIG) --tests $(FLOOR_TESTS) --repeats $(FLOOR_REPEATS)

# test length and warm-up from data: 30-s iperf3 runs on the floor, then their per-second intervals
SETTLE_REPEATS ?= 10
settle: setup floor-tools
	.venv/bin/podnet floor --config benchmarks/settle-floor.yaml --tests iperf3:tcp-30s \
	  --repeats $(SETTLE_REPEATS) --raw raw/settle
	.venv/bin/podnet settle raw/settle --out processed/settle

# ---- tests ---------------------------------------------------------------------------
test: setup lint unit pipeline-test nbval integration

unit: setup floor-tools
	.venv/bin/pytest -q tests/unit

pipeline-test: setup
	.venv/bin/pytest -q tests/pipeline

# nbval re-executes every published notebook (report, explore, compare, planning,
# seed_discrepancies) and compares it with what the pipeline wrote (examples regenerated first)
nbval: setup examples
	.venv/bin/pytest -q --nbval --nbval-sanitize-with tests/nbval-sanitize.cfg -p no:cacheprovider \
	  $(foreach ex,$(EXAMPLES),processed/$(ex)/notebooks/*.ipynb)

# embedded cluster: up, integration tests (cluster datapath, launcher, quick experiment), down
# (always) and a check that nothing was left behind, per CNI:NODES[:PROXY] in CLUSTER_CI_MATRIX;
# then the CI-sized CNI comparison campaign (config/campaigns/cni-ci.yaml)
integration: setup cluster-ci compare-ci

lint: setup
	@for ex in $(EXAMPLES); do .venv/bin/snakemake --lint --configfile config/examples/$$ex.yaml >/dev/null || { .venv/bin/snakemake --lint --configfile config/examples/$$ex.yaml; exit 1; }; done
	.venv/bin/snakefmt --check Snakefile workflow/rules
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .

fmt: setup
	.venv/bin/snakefmt Snakefile workflow/rules
	.venv/bin/ruff check --fix .
	.venv/bin/ruff format .

# JupyterLab at the explore notebook of the experiment published last, not counting the imported
# examples `make run` publishes after the main experiment (its cells find their tables
# from the notebook's own folder: podnet/report/paths.py); as root too (--allow-root)
LAB_ARGS ?=
lab: setup
	@nb=$$(ls -t processed/*/notebooks/explore.ipynb 2>/dev/null | grep -v -E "processed/($(EXAMPLES_RE))/" | head -1); \
	  [ -n "$$nb" ] || nb=$$(ls -t processed/*/notebooks/explore.ipynb 2>/dev/null | head -1); \
	  [ -n "$$nb" ] || { echo "no executed notebook yet: run 'make run' (or a pipeline) first"; nb=notebooks/explore.ipynb; }; \
	  echo "JupyterLab at $$nb"; \
	  .venv/bin/jupyter lab $$( [ "$$(id -u)" = 0 ] && echo --allow-root ) --ServerApp.root_dir=. $(LAB_ARGS) "$$nb"

clean-processed:
	rm -rf processed/*/ .snakemake

# delete leftover podnet namespaces (label app.kubernetes.io/managed-by=podnet) on the cluster
cleanup: setup
	.venv/bin/podnet cleanup
