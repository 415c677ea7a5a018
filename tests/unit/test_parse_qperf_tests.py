"""qperf's tidy `test` is the configured test's name (as for the other tools), so two configured tests
that run the same qperf test stay apart; files without a sidecar `test` keep qperf's block names."""

from pathlib import Path

import yaml

from podnet.parse.stage import parse_files

LAT = "tcp_lat:\n    latency  =  {us} us\n"
BW = "tcp_bw:\n    bw  =  1.17 GB/sec\n"


def write_run(raw: Path, rel: str, text: str, test: str | None) -> Path:
    path = raw / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    meta = {"podnet_sidecar": 1, "tool": "qperf", "variant": "v", "scenario": "s", "repeat": 1}
    if test is not None:
        meta["test"] = test
    path.with_name(path.name + ".meta.yaml").write_text(yaml.safe_dump(meta))
    return path


def tidy_tests(raw: Path, files: list[Path]) -> dict[str, list[float]]:
    parsed = parse_files(files, raw, "x")
    assert parsed.failed.empty, parsed.failed.to_dict("records")
    lat = parsed.tidy[parsed.tidy["metric"] == "latency"]
    return {t: [round(v * 1e6, 6) for v in g["value"]] for t, g in lat.groupby("test")}


def test_two_configured_tests_of_one_qperf_test_are_two_tidy_tests(tmp_path):
    files = [
        write_run(tmp_path, "s/qperf-tcp_lat/r001.txt", LAT.format(us="9.29"), "tcp_lat"),
        write_run(tmp_path, "s/qperf-tcp_lat-pinned/r001.txt", LAT.format(us="12.5"), "tcp_lat-pinned"),
    ]
    assert tidy_tests(tmp_path, files) == {"tcp_lat": [9.29], "tcp_lat-pinned": [12.5]}


def test_files_without_a_sidecar_test_keep_qperfs_block_names(tmp_path):
    files = [write_run(tmp_path, "s/qperf.txt", BW + LAT.format(us="9.29"), None)]
    parsed = parse_files(files, tmp_path, "x")
    assert set(parsed.tidy["test"]) == {"tcp_bw", "tcp_lat"}


def test_a_configured_test_of_several_qperf_tests_names_each(tmp_path):
    files = [
        write_run(tmp_path, "s/qperf-tcp_bw+tcp_lat/r001.txt", BW + LAT.format(us="9.29"), "tcp_bw+tcp_lat"),
        write_run(tmp_path, "s/qperf-both/r001.txt", BW + LAT.format(us="11.0"), "both"),
    ]
    parsed = parse_files(files, tmp_path, "x")
    assert parsed.failed.empty
    by_run = {frozenset(g["test"]) for _, g in parsed.tidy.groupby("raw_path")}
    assert by_run == {frozenset({"tcp_bw", "tcp_lat"}), frozenset({"both:tcp_bw", "both:tcp_lat"})}
