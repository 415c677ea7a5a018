"""qperf's latency tests: whether a ``*_lat`` block measured a round trip at all."""

from __future__ import annotations

#: fewest request/response exchanges a latency test must complete for its latency to be one
MIN_EXCHANGES = 10


def stalled(test: str, latency: float | None, length: float | None, msg_rate: float | None) -> str | None:
    """Why the ``test`` block (its ``latency``, ``time`` and ``msg_rate`` in s, s and 1/s; None when
    not printed) measured no round trip, or None. qperf's ``udp_lat`` does not resend a lost
    datagram: one loss stalls the exchange until the test ends, and qperf then prints the test's
    length as the latency ("latency = 3 sec, msg_rate = 0.33 /sec" from a 3-s run, seed 004's
    campaign, pod to its own host). A latency is one only when at least :data:`MIN_EXCHANGES`
    exchanges completed (msg_rate x time, with ``-v``) and it is below a quarter of the test's time."""
    if not test.endswith("_lat") or latency is None:
        return None
    done = msg_rate * length if msg_rate is not None and length else None
    if (done is not None and done < MIN_EXCHANGES) or (length and latency >= 0.25 * length):
        n = f"{done:.0f} exchange(s) in {length:g} s" if done is not None else f"a {length:g}-s test"
        return (
            f"qperf {test}: a latency of {latency:g} s from {n}: no round trip was measured (a lost datagram "
            f"stalls {test} until the test ends, and qperf prints the test's length as its latency); at "
            f"least {MIN_EXCHANGES} exchanges are needed"
        )
    return None
