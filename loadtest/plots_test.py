#!/usr/bin/env python3
"""plots.py on small CSVs: every chart is written, is well-formed SVG and shows its data;
rows of an older format are skipped; a missing CSV skips its chart."""
import io
import os
import sys
import tempfile
import xml.etree.ElementTree as ET
from contextlib import redirect_stderr, redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plots  # noqa: E402

PUSH = """notes,first_import_ms,first_import_visible_ms,one_changed_ms,one_changed_visible_ms,tenth_changed_ms,tenth_changed_visible_ms,ingest_rss_mb,edge_rss_mb
10,5.8,6.0,1.3,1.5,1.7,1.9,12.1,8.8
1000,253.3,279.6,3.9,4.1,28.2,28.8,26.7,14.9
10000,1932.1,1932.4,20.4,20.7,221.9,223.6,113.8,60.4
"""
# An old-format header and row first (skipped), then the new format over two runs.
SERVE = """date,page_bytes,gzip_bytes,connections,edge_rps,nginx_rps,ratio
2026-11-30,42517,11537,64,101500.81,94746.50,1.07
date,commit,server,pages,connections,duration_s,requests_per_s,p50_ms,p99_ms,cpu_us_per_req
2026-12-02,old1234,edge,2000,100,10,1.0,0.8,2.1,99.5
2026-12-03,new5678,edge,2000,50,10,61000,0.7,2.0,14.5
2026-12-03,new5678,edge,2000,200,10,63000,3.0,7.9,13.9
2026-12-03,new5678,nginx,2000,50,10,52000,0.9,2.6,18.2
2026-12-03,new5678,nginx,2000,200,10,54000,3.5,not-a-number,17.6
"""
SAMPLES = "date,commit,i,push_ms,edge_a_ms,edge_b_ms\n" + "".join(
    "2026-12-03,%s,%d,%.3f,%.3f,%.3f\n" % (c, i, 2 + i * 0.01, 2.3 + i * 0.01, 2.4 + i * 0.02)
    for c in ("run1", "run2") for i in range(50))


def check(cond, what):
    if not cond:
        print("FAIL: " + what)
        sys.exit(1)


def texts(path):
    root = ET.parse(path).getroot()  # raises on malformed XML
    check(root.tag.endswith("svg"), "%s: root is <svg>" % path)
    return [t.text or "" for t in root.iter() if t.tag.endswith("text")]


def main():
    with tempfile.TemporaryDirectory() as d:
        for name, body in (("push-bench.csv", PUSH), ("serve-bench.csv", SERVE),
                           ("propagation-samples.csv", SAMPLES)):
            with open(os.path.join(d, name), "w") as f:
                f.write(body)
        out = os.path.join(d, "svg")
        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            check(plots.main(["--results", d, "--out", out]) == 0, "plots.py exits 0")
        imp = texts(os.path.join(out, "import-vs-size.svg"))
        check("trip2g at 10,000 notes (anchor)" in imp, "import chart has the anchor in its legend")
        check("10,000" in imp and "first import, one push" in imp, "import chart: axis ticks and panels")
        serve = texts(os.path.join(out, "serve-latency.svg"))
        check("edge" in serve and "nginx" in serve, "serve chart: a line per server")
        check(any("new5678" in t for t in serve) and not any("old1234" in t for t in serve),
              "serve chart: only the newest date and commit")
        check(any("µs/request" in t for t in serve), "serve chart: CPU per request in µs")
        with open(os.path.join(out, "serve-latency.svg")) as f:
            svg = f.read()
        check("99.5" not in svg and "not-a-number" not in svg, "serve chart: older and unparsable rows skipped")
        prop = texts(os.path.join(out, "propagation-cdf.svg"))
        check(any("run2" in t and "50 single-note pushes" in t for t in prop), "CDF: the newest run only")
        check("target: p99 end to end 3 ms" in prop, "CDF: the target is marked")
        # A missing CSV skips its chart; the others are still written.
        os.remove(os.path.join(d, "serve-bench.csv"))
        out2 = os.path.join(d, "svg2")
        err = io.StringIO()
        with redirect_stdout(io.StringIO()), redirect_stderr(err):
            check(plots.main(["--results", d, "--out", out2]) == 0, "plots.py exits 0 without serve-bench.csv")
        check(not os.path.exists(os.path.join(out2, "serve-latency.svg")), "no serve chart without its CSV")
        check("serve-latency" in err.getvalue(), "the skipped chart is named on stderr")
        check(os.path.exists(os.path.join(out2, "propagation-cdf.svg")), "the other charts are still written")
    print("ok")


if __name__ == "__main__":
    main()
