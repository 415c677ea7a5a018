"""Campaigns: one experiment under several variants (CNI modes, settings), side by side.

- :mod:`.model`: a campaign config parsed and checked (variants, design, CNI modes).
- :mod:`.sidebyside`: one launch whose rounds interleave the variants (its sampler on :mod:`podnet.launch.rounds.stop`).
- :mod:`.account`: the side-by-side adaptive account as typed values.
- :mod:`.run`: brings the variants' clusters up, runs the launch, publishes
  (``python -m podnet.launch.campaign run|status CONFIG``).

The top of the launch stage below :mod:`podnet.launch.cli`.
"""
