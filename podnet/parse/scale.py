"""The time a change takes to reach the datapath, from the sidecars of scale points.

Every run of a scale point (:mod:`podnet.launch.spec.scale`) carries the point's record in its
sidecar (``scale``): the probe changes the launcher timed when it set the point up (``probe``:
``service_effect_s``, ``service_removed_s``, ``policy_effect_s``, ``policy_removed_s``, each a list
with one time per change in order, ``scale.changes`` of them; a sidecar written before that holds
one number: that set-up's one change). All runs of one set-up carry the same record (one
``verified`` time), so each set-up is counted once; a point set up once per round gives ``changes``
times per probe and round. :func:`effect_rows` turns them into tidy rows (one per change:
``scale_probes.csv``, written by the parse stage with the tidy table, :func:`probe_table`),
:func:`present_rows` into the object and rule counts per set-up.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from podnet.parse.raw import find_raw_files, read_sidecar

#: the probe times of a set-up (seconds; a list, one per change)
EFFECTS = ("service_effect_s", "service_removed_s", "policy_effect_s", "policy_removed_s")
#: probes waiting for a reach (a lifted deny policy, a new Service's endpoint): a sidecar whose
#: ``probe`` lacks ``reach_attempt_every_s`` (written before 2026-11-27 07:25 UTC, when reach attempts
#: waited for each other) saw such a change late by up to its ``connect_timeout_s`` (0.1 s) wherever
#: the path dropped the SYNs before it (each dropped attempt held that long): a lifted deny drops,
#: and a new Service's endpoint was seen 0.12 s after it at 0 Services by those attempts on every
#: variant, 0.03-0.04 s by attempts that did not wait (flannel-vxlan, both kube-proxy modes)
COARSE = ("service_effect_s", "policy_removed_s")
#: the connect limit of those older probes (seconds), where a record or table does not say it
OLD_CONNECT_LIMIT = 0.1
#: scale_probes.csv: one row per change (``setup``: the set-up's id, variant, launch and ``verified`` time;
#: ``change_no``: 0, 1, ... in the order timed; ``changes``: how many the set-up timed of it;
#: ``late_up_to_s``: how late the time may be beyond the 10-20 ms between attempts, 0 but for
#: :data:`COARSE` probes of older sidecars; ``disturbed``: every run that carries the set-up was judged
#: disturbed and kept, sidecar ``disturbed: true``: the machine was busy with other work then)
EFFECT_COLUMNS = [
    "experiment",
    "variant",
    "launch_id",
    "round_seq",
    "verified",
    "setup",
    "services",
    "network_policies",
    "endpoints_per_service",
    "rules_per_policy",
    "metric",
    "change_no",
    "changes",
    "value",
    "late_up_to_s",
    "disturbed",
]
_POINT = ["services", "network_policies", "endpoints_per_service", "rules_per_policy"]
PRESENT_COLUMNS = [
    "variant",
    "launch_id",
    "verified",
    "services",
    "network_policies",
    "present_services",
    "present_endpoint_slices",
    "present_network_policies",
    "objects_per_s",
    "ready_s",
    "node",
    "iptables_rules",
    "nft_rules",
    "nft_elements",
    "ipset_entries",
    "calico_ipset_entries",
    "cilium_policy_entries",
    "cilium_lb_entries",
]
#: the per-node counts of :data:`PRESENT_COLUMNS` (``iptables_rules`` is the record's ``iptables_total``)
_COUNTS = PRESENT_COLUMNS[PRESENT_COLUMNS.index("nft_rules") :]


def _setups(
    sidecars: Iterable[Mapping[str, Any]],
) -> list[tuple[Mapping[str, Any], Mapping[str, Any], bool]]:
    """(sidecar, scale record, disturbed) of each verified set-up once (the first run that carries
    it); ``disturbed``: every run that carries it was judged disturbed and kept (sidecar
    ``disturbed: true``), so the machine was busy with other work around the set-up too."""
    first: dict[tuple[str, str, str], tuple[Mapping[str, Any], Mapping[str, Any]]] = {}
    quiet: dict[tuple[str, str, str], bool] = {}
    for meta in sidecars:
        rec = meta.get("scale")
        if not isinstance(rec, Mapping) or not rec.get("verified") or meta.get("warmup"):
            continue
        k = (str(meta.get("variant")), str((meta.get("launch") or {}).get("id")), str(rec["verified"]))
        first.setdefault(k, (meta, rec))
        quiet[k] = quiet.get(k, False) or meta.get("disturbed") is not True
    return [(meta, rec, not quiet[k]) for k, (meta, rec) in first.items()]


def times(value: Any) -> list[float]:
    """A probe's times from a sidecar: a list (``scale.changes``), one number (a sidecar written
    before it: its set-up's one change), or none. ValueError for anything else."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [float(v) for v in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [float(value)]
    raise ValueError(f"a probe time that is neither a number nor a list of numbers: {value!r}")


def effect_rows(sidecars: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per set-up, probe and change (columns :data:`EFFECT_COLUMNS`). ValueError for a
    probe time that is not a number."""
    rows = []
    for meta, rec, disturbed in _setups(sidecars):
        want = rec.get("wanted") or {}
        launch = (meta.get("launch") or {}).get("id")
        probe = rec.get("probe") or {}
        for metric in EFFECTS:
            values = times(probe.get(metric))
            late = late_up_to(probe, metric)
            for i, v in enumerate(values):
                rows.append(
                    {
                        "experiment": meta.get("experiment"),
                        "variant": meta.get("variant"),
                        "launch_id": launch,
                        "round_seq": meta.get("round_seq"),
                        "verified": rec["verified"],
                        "setup": f"{meta.get('variant')}/{launch}/{rec['verified']}",
                        **{k: want.get(k) for k in _POINT},
                        "metric": metric,
                        "change_no": i,
                        "changes": len(values),
                        "value": v,
                        "late_up_to_s": late,
                        "disturbed": disturbed,
                    }
                )
    out = pd.DataFrame(rows, columns=EFFECT_COLUMNS)
    return out.astype(
        {
            "change_no": "int64",
            "changes": "int64",
            "value": "float64",
            "late_up_to_s": "float64",
            "disturbed": "bool",
        }
    )


def late_up_to(probe: Mapping[str, Any], metric: str) -> float:
    """Seconds a time of ``metric`` in a sidecar's ``probe`` record may be late by beyond the
    10-20 ms between attempts: the connect limit for :data:`COARSE` probes of a sidecar whose reach
    attempts waited for each other, else 0."""
    if metric not in COARSE or probe.get("reach_attempt_every_s") is not None:
        return 0.0
    return float(probe.get("connect_timeout_s") or OLD_CONNECT_LIMIT)


def present_rows(sidecars: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per set-up and node: the objects present, the creation rate, the rule counts."""
    rows = []
    for meta, rec, _ in _setups(sidecars):
        want, present = rec.get("wanted") or {}, rec.get("present") or {}
        base = {
            "variant": meta.get("variant"),
            "launch_id": (meta.get("launch") or {}).get("id"),
            "verified": rec["verified"],
            "services": want.get("services"),
            "network_policies": want.get("network_policies"),
            **{f"present_{k}": present.get(k) for k in ("services", "endpoint_slices", "network_policies")},
            "objects_per_s": (rec.get("applied") or {}).get("objects_per_s"),
            "ready_s": rec.get("ready_s"),
        }
        rules = rec.get("rules") or {}
        nodes = {n: r for n, r in rules.items() if isinstance(r, Mapping)} or {None: {}}
        for node, r in sorted(nodes.items(), key=lambda kv: str(kv[0])):
            rows.append(
                {
                    **base,
                    "node": node,
                    "iptables_rules": r.get("iptables_total"),
                    **{k: r.get(k) for k in _COUNTS},
                }
            )
    return pd.DataFrame(rows, columns=PRESENT_COLUMNS)


def read_sidecars(raw_dir: Path | str) -> list[dict[str, Any]]:
    """Every sidecar of ``raw_dir`` (the scale records are in those of the point's runs)."""
    return [read_sidecar(f) for f in find_raw_files(raw_dir)]


def scale_run_sidecars(
    tidy: pd.DataFrame, params: Iterable[str] = ("services", "network_policies")
) -> list[dict[str, Any]]:
    """The sidecars of ``tidy``'s runs of scale points (tidy ``sweep_param`` in ``params``), each raw
    file's once, read where its tidy ``raw_path`` says (every set-up a counted run saw; a set-up
    none of whose runs gave a row is not among them). ValueError when a scale row has no
    ``raw_path``; :class:`~podnet.parse.raw.SidecarError` when a sidecar cannot be read."""
    if tidy.empty or "sweep_param" not in tidy.columns:
        return []
    rows = tidy[tidy["sweep_param"].astype(str).isin(tuple(params))]
    if rows.empty:
        return []
    paths = rows["raw_path"].astype("string").fillna("") if "raw_path" in rows.columns else None
    if paths is None or (paths.str.strip() == "").any():
        raise ValueError("rows of scale points without raw_path: their probes' sidecars cannot be found")
    experiment = dict(zip(paths, rows["experiment"])) if "experiment" in rows.columns else {}
    out = []
    for p in sorted(set(paths)):
        meta = read_sidecar(p)
        if experiment.get(p) is not None:  # a launcher's sidecar does not name its experiment
            meta.setdefault("experiment", str(experiment[p]))
        out.append(meta)
    return out


def probe_table(tidy: pd.DataFrame) -> pd.DataFrame:
    """scale_probes.csv: :func:`effect_rows` of the sidecars of ``tidy``'s scale runs
    (:func:`scale_run_sidecars`); no rows without a scale sweep. ValueError when a scale run's
    sidecar cannot be read where its ``raw_path`` says, or holds a probe time that is no number."""
    try:
        return effect_rows(scale_run_sidecars(tidy))
    except (OSError, ValueError) as exc:
        raise ValueError(f"scale_probes.csv (time to effect) reads the scale runs' sidecars: {exc}") from exc
