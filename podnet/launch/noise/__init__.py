"""The machine's floor and what else ran beside a run.

- :mod:`.netns_floor`: two bare network namespaces joined by a veth, shaped as the cluster's links
  when asked (``envs/cluster/shape.sh``); :mod:`.floor_cli` is ``podnet floor``.
- :mod:`.floor`: that floor interleaved with a launch's rounds (``launch.floor``).
- :mod:`.interference`: what competed with each run (``/proc/stat`` snapshots, daemons' CPU).
- :mod:`.quiet`: whether the machine is quiet enough to start (``make seeds``' first step).

Imports only :mod:`podnet.launch.spec` and :mod:`podnet.launch.cluster` of the launch stage.
"""
