#!/usr/bin/env python3
"""The benchmark charts: SVG files from the CSVs the benchmarks append to.

    python3 loadtest/plots.py [--results DIR] [--out DIR]

Reads DIR (default loadtest/results) and writes into --out (default the same):
  import-vs-size.svg  push-bench.csv: first import, one changed note and N/10 changed notes
                      against vault size, with the anchor's (trip2g) figures at 10,000 notes
  serve-latency.svg   serve-bench.csv: requests/s, p99 and server CPU per request against
                      connections, edge and nginx (the newest date and commit in the file)
  propagation-cdf.svg propagation-samples.csv: the distribution of push -> page served on
                      both edges (the newest run in the file)
A chart whose CSV is missing or has no rows in the expected format is skipped (said on
stderr); rows that do not parse are skipped. Python 3 standard library only (svgchart.py).
"""
import argparse
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import svgchart  # noqa: E402

# trip2g's figures at 10,000 notes, one core (README "Benchmarks").
ANCHOR = {"first_import_ms": 13770, "one_changed_ms": 382, "tenth_changed_ms": 2303}
TARGET_END_TO_END_P99_MS = 3.0


def rows(path, need):
    """The rows of a CSV that have every column in `need` as a number. A line naming every
    column in `need` is a header for the lines after it (a file appended to across format
    changes); lines under another header, or that do not parse, are skipped."""
    if not os.path.exists(path):
        return []
    out, header = [], None
    with open(path, newline="") as f:
        for line in csv.reader(f):
            if all(k in line for k in need):
                header = line
                continue
            if header is None or len(line) != len(header):
                continue
            r = dict(zip(header, line))
            try:
                for k in need:
                    float(r[k])
            except ValueError:
                continue
            out.append(r)
    return out


def newest(rs):
    """The rows of the last (date, commit) in file order (all rows when there are no such columns)."""
    if not rs or "date" not in rs[-1] or "commit" not in rs[-1]:
        return rs
    key = (rs[-1]["date"], rs[-1].get("commit"))
    return [r for r in rs if (r["date"], r.get("commit")) == key]


def stamp(rs):
    r = rs[-1]
    return ", ".join(x for x in (r.get("date", ""), r.get("commit", "")) if x)


def import_chart(results, out):
    rs = newest(rows(os.path.join(results, "push-bench.csv"), ["notes", "first_import_ms", "one_changed_ms"]))
    if not rs:
        return None
    by = {int(float(r["notes"])): r for r in rs}  # the last row per size
    panels = []
    for col, heading in (("first_import_ms", "first import, one push"), ("one_changed_ms", "one changed note"),
                         ("tenth_changed_ms", "N/10 changed notes, one push")):
        pts = [(n, float(r[col])) for n, r in by.items() if r.get(col) not in (None, "")]
        if not pts:
            continue
        series = [svgchart.Series("folio", pts, unit="ms"),
                  svgchart.Series("trip2g at 10,000 notes (anchor)", [(10000, ANCHOR[col])], line=False,
                                  marker="square", color="#d62728", unit="ms")]
        panels.append(svgchart.Panel(heading, series, "notes in the vault (log scale)", "ms (log scale)", xlog=True,
                                     ylog=True, xticks=sorted(by)))
    path = os.path.join(out, "import-vs-size.svg")
    svgchart.write(path, "push-bench: push time to response against vault size, folio and its anchor",
                   "%s; nats-server, ingest and edge on one core; push-bench notes (~400 bytes); "
                   "anchor figures from trip2g's own benchmark, one core" % (stamp(rs) or "push-bench.csv"), panels)
    return path


def serve_chart(results, out):
    need = ["connections", "requests_per_s", "p99_ms", "cpu_us_per_req"]
    rs = newest([r for r in rows(os.path.join(results, "serve-bench.csv"), need) if r.get("server")])
    if not rs:
        return None
    last = {}
    for r in rs:  # the last row per server and connection count
        last[(r["server"], int(float(r["connections"])))] = r
    servers = sorted({s for s, _ in last}, key=lambda s: (s != "edge", s))
    conns = sorted({c for _, c in last})
    colors = {"edge": "#1f77b4", "nginx": "#2ca02c"}
    panels = []
    for col, heading, unit in (("requests_per_s", "throughput", "requests/s"), ("p99_ms", "p99 latency", "ms"),
                               ("cpu_us_per_req", "server CPU per request", "µs/request")):
        series = [svgchart.Series(s, [(c, float(last[(s, c)][col])) for c in conns if (s, c) in last],
                                  color=colors.get(s), unit=unit) for s in servers]
        panels.append(svgchart.Panel(heading, series, "concurrent connections (log scale)", unit, xlog=True,
                                     xticks=conns))
    pages = rs[-1].get("pages", "?")
    path = os.path.join(out, "serve-latency.svg")
    svgchart.write(path, "serve-bench: folio-edge and nginx serving the same %s pages" % pages,
                   "%s; each server on one core with one worker, wrk (gzip, every URL in turn) on the other; "
                   "CPU from the server's own CPU time" % stamp(rs), panels)
    return path


def cdf(values):
    v = sorted(values)
    n = len(v)
    return [(x, 100.0 * (i + 1) / n) for i, x in enumerate(v)]


def propagation_chart(results, out):
    rs = rows(os.path.join(results, "propagation-samples.csv"), ["i", "push_ms", "edge_a_ms", "edge_b_ms"])
    if not rs:
        return None
    start = max(k for k, r in enumerate(rs) if int(float(r["i"])) == 0)  # the newest run starts at i = 0
    rs = rs[start:]
    push = [float(r["push_ms"]) for r in rs]
    a = [float(r["edge_a_ms"]) for r in rs]
    b = [float(r["edge_b_ms"]) for r in rs]
    both = [max(x, y) for x, y in zip(a, b)]
    after = [max(0.01, e - p) for e, p in zip(both, push)]
    series = [svgchart.Series("push response", cdf(push), marker=None),
              svgchart.Series("edge A serves the new ETag", cdf(a), marker=None),
              svgchart.Series("edge B serves the new ETag", cdf(b), marker=None),
              svgchart.Series("both edges (end to end)", cdf(both), marker=None),
              svgchart.Series("both edges minus the push response", cdf(after), marker=None, dash=True)]
    lo = max(0.05, min(min(after), min(push)))
    panel = svgchart.Panel("share of pushes served within a time", series, "ms from sending the push (log scale)",
                           "% of pushes", xlog=True, ymax=100,
                           vmarks=[(TARGET_END_TO_END_P99_MS, "target: p99 end to end 3 ms")],
                           ytick_fmt=lambda v: "%d%%" % v)
    panel.xticks = svgchart.log_ticks(lo, max(both) * 1.2)
    path = os.path.join(out, "propagation-cdf.svg")
    svgchart.write(path, "propagation-bench: one changed note, push to both edges serving it",
                   "%s; %d single-note pushes; nats-server, ingest and two edges on one core, the driver on the "
                   "other" % (stamp(rs), len(rs)), [panel], panel_w=640)
    return path


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--results", default=os.path.join(here, "results"), help="the CSVs' folder")
    ap.add_argument("--out", help="where the SVGs go (default: --results)")
    a = ap.parse_args(argv)
    out = a.out or a.results
    os.makedirs(out, exist_ok=True)
    for name, chart in (("import-vs-size", import_chart), ("serve-latency", serve_chart),
                        ("propagation-cdf", propagation_chart)):
        path = chart(a.results, out)
        print("chart: %s" % path if path else "%s: no rows in the expected format; skipped" % name,
              file=sys.stdout if path else sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
