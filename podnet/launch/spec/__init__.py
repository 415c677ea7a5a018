"""The launch spec: the ``launch`` section of a config as data, and what it expands to.

- :mod:`.config`: the section validated (endpoints, scenarios, tools/tests, repeats, timeouts).
- :mod:`.case`: what it runs, typed: endpoints, tests (sweep point, load, scale point, own
  ``affinity``), scenarios, cases.
- :mod:`.defaults`: schema defaults and durations.
- :mod:`.sweep`: a test's ``sweep:`` expanded to points.
- :mod:`.load`: a test's ``load:`` (latency under load): the load beside its probe, swept over streams.
- :mod:`.placement`: node resolution of endpoint placements (name, labels, same/other node).
- :mod:`.plan`: cases, deduplicated pods/Services, the argv of every run.
- :mod:`.disturbance`: ``launch.disturbance``, the rule that judges a run disturbed.

Imports nothing else of :mod:`podnet.launch`.
"""
