"""What the notebooks print from data or config reads as written in their HTML (issue 45, "HTML
escapes what it prints"): a reason naming ``launch.tools.<tool>.tests[].sweep`` keeps its ``<tool>``
(never taken as a tag), in every Markdown the report's helpers write and in the seed's claims table."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
from nbconvert.filters.markdown_mistune import markdown2html_mistune

from podnet.report import (
    explore,
    figures,
    findings,
    md,
    netready,
    notebook_html,
    ranking,
    scale,
    seed_reports,
    tables,
    vs_seed,
)
from podnet.report.figures import data
from podnet.report.vs_seed import seeds, words
from podnet.stats import account
from podnet.stats.scale import CURVE_COLUMNS

#: an omitted figure's reason as the figures' plan writes it (podnet/report/figures/sweeps.py)
REASON = "no test was swept in this experiment (launch.tools.<tool>.tests[].sweep)"
#: that reason's config key as the rendered page must show it
KEY = "launch.tools.&lt;tool&gt;.tests[].sweep"
#: a free text with every character that needs an entity, and how the page shows it
ODD = "MTU <mtu> & jumbo"
ODD_SHOWN = "MTU &lt;mtu&gt; &amp; jumbo"


def html(markdown: str) -> str:
    """``markdown`` as nbconvert renders a notebook's Markdown output (mistune, raw HTML passed on)."""
    return markdown2html_mistune(markdown)


def shows(markdown: str, text: str = ODD_SHOWN) -> bool:
    """Whether the rendered ``markdown`` shows ``text`` literally and holds no tag taken from the data."""
    out = html(markdown)
    return text in out and "<mtu>" not in out and "<tool>" not in out


def test_text_writes_three_characters_as_entities_and_leaves_markdown_alone():
    assert md.text("launch.tools.<tool> & *x* `y`") == "launch.tools.&lt;tool&gt; &amp; *x* `y`"
    assert md.text(3) == "3" and md.text(Path("a/b.csv")) == "a/b.csv"
    assert "<tool>" in html("launch.tools.<tool>") and KEY not in html("launch.tools.<tool>")  # the bug
    assert KEY in html(md.text("launch.tools.<tool>.tests[].sweep"))
    assert "&amp;lt;" in html(md.text("&lt;"))  # an entity in the data is text too


def _plan(tmp_path: Path) -> Path:
    plan = tmp_path / "plan.json"
    left = f"a measure printed coarser than its spread ({ODD})"
    plan.write_text(
        json.dumps({"sweeps": {"omitted": REASON}, "throughput": {"planned": True, "left_out": [left]}})
    )
    for ext in ("png", "svg", "pdf"):
        (tmp_path / f"throughput.{ext}").write_bytes(b"drawn")
    return plan


def test_the_not_drawn_list_keeps_the_config_key_of_its_reason(tmp_path):
    text = figures.omitted_markdown(_plan(tmp_path))
    out = html(text)
    assert KEY in out and "<tool>" not in out, out
    assert "<strong>sweeps</strong>" in out and "<li>" in out  # our own Markdown stays Markdown
    assert shows(text)  # a left-out measure's reason too


def test_the_report_page_shows_the_reason_as_written(tmp_path):
    """Through the page the workflow writes (report.html): nbconvert's lab template."""
    nb = nbformat.v4.new_notebook()
    shown = {"text/markdown": figures.omitted_markdown(_plan(tmp_path)), "text/plain": "<Markdown>"}
    nb.cells = [nbformat.v4.new_code_cell("", outputs=[nbformat.v4.new_output("display_data", shown)])]
    page = notebook_html.to_html(nb)
    assert KEY in page and "<tool>" not in page


def _ratio(**kw) -> pd.Series:
    """A ratios.csv row (tests/unit/test_ratio_digits.py's) with ``kw``."""
    base = {
        "tool": "iperf2", "test": "tcp", "metric": "throughput", "by": "scenario",
        "scenario": "pod-pod-cross-node", "treatment": "pod-pod-cross-node", "baseline": "host-host",
        "variant": "flannel", "ratio": 0.97, "ci_low": 0.96, "ci_high": 0.98, "interval": "welch",
        "n_pairs": 0, "n_treatment": 8, "n_baseline": 8, "p_adjusted": 0.001, "role": "primary",
        "direction": "", "protocol": "tcp", "streams": 1,
    }  # fmt: skip
    return pd.Series({**base, **kw})


def test_findings_keep_the_note_of_a_ratio_without_interval():
    assert shows(findings.sentence(_ratio(ci_low=np.nan, ci_high=np.nan, ci_note=ODD)))


def test_adaptive_sampling_keeps_its_launch_id(tmp_path):
    doc = {
        "podnet_adaptive": 1, "experiment": "t", "variant": "v", "launch_id": "L<id>", "ended": "2026-01-01T00:00:00Z",
        "mode": "primary", "stop": "budget spent", "runs_launched": 10, "fixed_repeats": 10,
        "fixed_protocol_runs": 20, "wall_s": 60.0, "budget_s": 60.0,
        "items": [{"by": "scenario", "baseline": "b", "treatment": "x", "scenario": "x", "tool": "iperf3",
                   "test": "tcp", "metric": "throughput", "rel_half_width": 0.2, "target_rel_half_width": 0.05,
                   "n": 3, "n_needed": 40, "status": "unmet", "reason": "budget spent"}],
    }  # fmt: skip
    (tmp_path / "1.json").write_text(json.dumps(doc))
    text = findings.adaptive_markdown(account.read_accounts([tmp_path / "1.json"]))
    assert shows(text, "launch L&lt;id&gt;"), html(text)  # its reasons: the account schema's words


def test_ranking_keeps_why_nothing_was_ranked():
    assert shows(ranking.markdown(pd.DataFrame({"row": ["none"], "reason": [ODD]})))


def test_scale_keeps_why_a_ratio_has_no_interval():
    row = {
        "variant": "iptables", "scenario": "pod-svc-cross-node", "tool": "netperf", "sweep": "TCP_CRR",
        "metric": "transaction_rate", "unit": "transactions/s", "sweep_param": "services",
        "largest": 1000, "at_0": 5000.0, "at_largest": 4000.0, "ratio": 0.8, "ratio_low": np.nan,
        "ratio_high": np.nan, "ratio_n": 1, "ratio_note": ODD,
    }  # fmt: skip
    empty = pd.DataFrame()
    t = data.Tables(
        empty, empty, empty, empty, scale_curves=pd.DataFrame([row]).reindex(columns=CURVE_COLUMNS)
    )
    assert shows(scale.markdown(t))


def test_time_to_network_keeps_the_note_of_a_ratio_without_interval():
    x = pd.Series(
        {
            "estimand": "p90", "metric": "net_ready_s", "variant": "calico", "baseline_variant": "flannel",
            "ratio": 1.2, "ci_low": np.nan, "ci_high": np.nan, "note": f"{ODD}; more",
        }
    )  # fmt: skip
    assert shows(netready.ratio_sentence(x))


def test_explore_keeps_the_values_it_says_once_and_names_a_missing_file(tmp_path):
    df = pd.DataFrame({"pod": [ODD, ODD], "value": ["1", "2"]})
    shown, said = tables.said_once(df, keep=["value"])
    assert list(shown.columns) == ["value"] and shows(said)
    assert shows(explore.methods_links(tmp_path / "<mtu>.md", "../METHODS.md"), "&lt;mtu&gt;.md")


def test_the_slice_counts_keep_the_values_that_split_a_run(tmp_path):
    from tests.unit.test_explore import _experiment

    t = data.load(_experiment(tmp_path))
    t.tidy["direction"] = t.tidy["direction"].replace({"bidir-forward": ODD})
    assert shows(explore.slice_counts(t))


def _vs_group() -> pd.DataFrame:
    """One (path, measure) group of vs_seed.csv: a seed CNI not run here, one in both, a set-up note."""
    common = {
        "seed": "seed <x>", "path": "pod <a>", "scenario": "pod-pod", "tool": "iperf3", "test": "tcp",
        "metric": "throughput", "seed_tool": "iperf <b>", "seed_test": "tcp", "seed_metric": "throughput",
        "note": ODD, "ranking": "nothing to rank",
    }  # fmt: skip
    return pd.DataFrame(
        [
            {
                **common,
                "seed_cni": "Calico <IPIP>",
                "variant": "calico",
                "status": "not run here",
                "rank_seed": 1.0,
            },
            {**common, "seed_cni": "Flannel", "variant": "flannel", "status": "both", "rank_seed": 2.0},
        ]
    )


def test_the_seed_comparison_keeps_the_seeds_names_and_notes():
    text = words.markdown(_vs_group())
    for shown in ("seed &lt;x&gt;", "pod &lt;a&gt;", "iperf &lt;b&gt;", "Calico &lt;IPIP&gt;", ODD_SHOWN):
        assert shown in html(text), (shown, html(text))
    assert "<x>" not in html(text) and "<IPIP>" not in html(text)
    assert "seed &lt;x&gt;" in html(vs_seed.no_ranking("seed <x>"))


def test_the_claims_keep_the_seeds_name_and_the_claims_table_its_text(tmp_path):
    claims = pd.DataFrame(
        [{"seed": "seed <x>", "claim": "c1", "says": f"bw {ODD}", "verdict": "agrees", "reason": "x"}]
    ).reindex(columns=vs_seed.CLAIM_COLUMNS)
    back = vs_seed.read_claims(vs_seed.write(claims, tmp_path / "vs_seed_claims.csv"))
    assert "Of 1 claim of seed &lt;x&gt;: 1 agrees." in html(vs_seed.headline(back, pd.DataFrame()))
    table = vs_seed.claims_view(back).to_html()
    assert f"bw {ODD_SHOWN}" in table and "<mtu>" not in table


def test_every_seed_campaign_keeps_its_names():
    counts = pd.DataFrame({"campaign": ["seed-<n>"], "seed": ["seed <n>"], "verdict": ["agrees"], "n": [1]})
    out = html(seeds.headline(counts))
    assert "<strong>seed-&lt;n&gt;</strong> (seed &lt;n&gt;)" in out and "<n>" not in out
    claims = pd.DataFrame([{"campaign": "seed-<n>", "seed": "seed <n>", "claim": "c", "verdict": "agrees"}])
    parts = seeds.per_campaign(claims)
    assert "seed-&lt;n&gt;<a" in html(parts[0]) and "seed &lt;n&gt;" in html(parts[1])


def test_the_seed_discrepancies_lead_keeps_its_file_names():
    text = seed_reports.lead("seed-cni-1gbe", [Path("raw/x/published/a<b>&c.csv")], 2)
    out = html(text)
    assert (
        "a&lt;b&gt;&amp;c.csv" in out
        and "1 published table(s)" in out
        and "<strong>2 discrepancies</strong>" in out
    )
    assert "(none)" in seed_reports.lead("e", [], 0)
