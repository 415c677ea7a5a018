r"""The run loop of one launch.

- :mod:`.runner`: the whole launch (fixed or adaptive rounds), :class:`~.runner.Launcher`.
- :mod:`.state`: what raw/ already holds; which runs are missing.
- :mod:`.schedule`: interleaved (or shuffled, seeded) rounds.
- :mod:`.warmup`: uncounted warm-up runs.
- :mod:`.execute`: one run: exec, judge, raw file + sidecar.
- :mod:`.underload`: a latency-under-load run's load, started before its probe and written beside it.
- :mod:`.adaptive`: the adaptive sampler (rounds until the primary comparisons meet their target).
- :mod:`.stop`: the adaptive stop rule (open, met, why), shared with side-by-side variants.
- :mod:`.account`: the adaptive account as typed values (JSON at the edge).
- :mod:`.interface`: what the adaptive stop and the warm-up need of a launch, and a run of the cluster
  (``Protocol``\ s).
- :mod:`.results`: per-case counts, the manifest, the launch log.

Imports :mod:`podnet.launch.spec`, :mod:`podnet.launch.cluster` and :mod:`podnet.launch.noise`.
"""
