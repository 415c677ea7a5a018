"""reference adapter: published result tables (seed 003) as tidy rows marked source=reference."""

import pytest

from podnet.parse import parse_files
from podnet.parse.raw import find_raw_files
from podnet.tools import ParseError, get
from podnet.tools.reference import to_si
from tests.conftest import REPO

ref = get("reference")


def test_units():
    assert to_si(9.16, "Gbits/sec") == (pytest.approx(9.16e9), "bit/s")
    assert to_si(113.27, "us") == (pytest.approx(113.27e-6), "s")
    assert to_si(0.18, "%") == (pytest.approx(0.0018), "fraction")
    assert to_si(3.24, "GB/s") == (pytest.approx(25.92e9), "bit/s")
    assert to_si(12439.61, "requests/s") == (12439.61, "requests/s")
    with pytest.raises(ParseError):
        to_si(1, "parsecs")


def test_rows_carry_their_own_case():
    text = "variant,scenario,tool,test,metric,value,unit\ncalico,pod-pod,netperf,TCP_RR,latency_mean,275.22,us\nx,y,z,t,m,,us\n"
    r = ref.parse(text)
    assert len(r.measurements) == 1  # an empty cell is skipped, never 0
    m = r.measurements[0]
    assert (m.variant, m.scenario, m.tool, m.test, m.value, m.unit) == (
        "calico",
        "pod-pod",
        "netperf",
        "TCP_RR",
        pytest.approx(275.22e-6),
        "s",
    )
    with pytest.raises(ParseError, match="lacks columns"):
        ref.parse("variant,value\na,1\n")


def test_seed003_tables_import_as_reference_rows():
    raw = REPO / "raw/seed-cni-report"
    p = parse_files(find_raw_files(raw), raw, "seed-cni-report")
    assert p.failed.empty
    t = p.tidy
    assert set(t["source"]) == {"reference"}
    assert len(t) == 5 * 6 + 4 * 6 + 5 * 6 + 5 * 6
    assert set(t["variant"]) == {
        "cilium-vxlan",
        "calico-vxlan",
        "calico-ipip",
        "calico-underlay",
        "macvlan-standalone",
        "sriov-standalone",
    }
    cell = t[(t.variant == "calico-vxlan") & (t.scenario == "pod-pod-same-node") & (t.test == "TCP_CRR")]
    assert cell["value"].tolist() == pytest.approx([982.92e-6])
    thr = t[(t.variant == "sriov-standalone") & (t.scenario == "pod-service-cross-node")]
    assert thr["value"].tolist() == pytest.approx([16.3e9]) and thr["unit"].tolist() == ["bit/s"]
