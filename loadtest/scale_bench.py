#!/usr/bin/env python3
"""scale-bench driver: what a push costs as the vault grows (issue 12's benchmark).

    python3 loadtest/scale_bench.py [--build build] [--sizes 1000,10000,100000] [--reps 5]
                                    [--seed 1] [--csv loadtest/results/scale-bench.csv] [--keep]
                                    [--append] [--push-timeout 3600] [--check-growth X]

For each size: a vault from loadtest/vaultgen.py, and a fresh nats-server -js, folio-storage,
folio-ingest and folio-edge on free loopback ports (as push-bench's cluster starts them; not
pinned: the numbers are those of the 2-core machine as a whole). It measures only through
public interfaces (the `folio` command, HTTP endpoints, /metrics, ingest's JSON log lines and
/proc), so it keeps working while the CLI, ingest and edge change inside:

- first import: `folio push` wall time; the server time is the sum of took_ms (and of each
  phase of phases_ms) over every ingest log line with a took_ms written during the command;
  pages rendered (folio_ingest_pages_rendered_total); until the edge serves the last note;
- after the import (ingest's outbox drained, the edge settled): RSS (VmRSS) of nats-server,
  ingest, edge and storage, the bytes of their data dirs, the edge's folio_edge_page_bytes
  and folio_edge_pages;
- a second edge started after the import: until its /readyz answers 200 (it must then serve
  the last note), its RSS and folio_edge_pages;
- one changed note (median of --reps, a different note each time): `folio push` end to end,
  server took_ms and phases, until the edge serves it, pages rendered, and the SQL rows it
  touched if ingest's /metrics has a counter of them (a family with "rows" in its name);
- 1% of the notes changed in one `folio push`: wall time, server time, per changed note.

Writes one CSV row per size x metric (notes,metric,value,unit), then runs scale_report.py
(the table, the SVG chart, the 1M-notes extrapolation).
"""
import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.dont_write_bytecode = True  # no __pycache__ in the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scale_report  # noqa: E402
from loopback import free_port, http_get, wait_until  # noqa: E402
import vaultgen  # noqa: E402

TOKEN = "scale-bench-token"
WRITE_TOKEN, READ_TOKEN = "scale-bench-write", "scale-bench-read"
CHILDREN = []  # every process started here; stopped by stop_all


def start(argv, log):
    f = open(log, "ab")
    p = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    f.close()
    CHILDREN.append(p)
    return p


def stop(p):
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    if p in CHILDREN:
        CHILDREN.remove(p)


def stop_all():
    for p in list(reversed(CHILDREN)):
        stop(p)


def rss_bytes(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return -1


def dir_bytes(path):
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


def metrics(base):
    """{family name: sum of its samples} from GET base/metrics (Prometheus text format)."""
    status, body = http_get(base + "/metrics")
    out = {}
    if status != 200:
        return out
    for line in body.decode(errors="replace").splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)", line)
        if m:
            try:
                out[m.group(1)] = out.get(m.group(1), 0.0) + float(m.group(3))
            except ValueError:
                pass
    return out


def row_counters(snapshot):
    """Families of ingest's /metrics that count SQL rows (folio_ingest_sql_rows_written_total)."""
    return sorted(k for k in snapshot if "rows" in k and k.startswith("folio_ingest_") and
                  not k.endswith(("_bucket", "_count")))


class Cluster:
    """nats-server -js, folio-storage, folio-ingest, folio-edge in dir `work`."""

    def __init__(self, bin_dir, work):
        self.bin, self.work = bin_dir, work
        nats = shutil.which("nats-server") or "/usr/sbin/nats-server"
        self.nats_port, mon = free_port(), free_port()
        self.nats = start([nats, "-js", "-a", "127.0.0.1", "-p", str(self.nats_port), "-m", str(mon),
                           "-sd", work + "/nats"], work + "/nats.log")
        self.ready("http://127.0.0.1:%d/healthz?js-enabled-only=true" % mon, "nats-server")
        self.storage_url = "http://127.0.0.1:%d" % free_port()
        self.storage = start([bin_dir + "/folio-storage", "--listen", self.storage_url[7:], "--data",
                              work + "/storage", "--write-token", WRITE_TOKEN, "--read-token", READ_TOKEN],
                             work + "/storage.log")
        self.ready(self.storage_url + "/readyz", "folio-storage")
        self.ingest_url = "http://127.0.0.1:%d" % free_port()
        self.ingest_log = work + "/ingest.log"
        self.ingest = start([bin_dir + "/folio-ingest", "--listen", self.ingest_url[7:], "--nats", self.nats_addr(),
                             "--data", work + "/ingest", "--token", TOKEN, "--site-name", "Scale bench",
                             "--storage", self.storage_url, "--storage-token", WRITE_TOKEN, "--log-format", "json"],
                            self.ingest_log)
        self.ready(self.ingest_url + "/readyz", "folio-ingest")
        self.edge, self.edge_url = self.start_edge("edge")
        self.ready(self.edge_url + "/readyz", "folio-edge")

    def nats_addr(self):
        return "nats://127.0.0.1:%d" % self.nats_port

    def start_edge(self, name):
        url = "http://127.0.0.1:%d" % free_port()
        p = start([self.bin + "/folio-edge", "--listen", url[7:], "--nats", self.nats_addr(), "--storage",
                   self.storage_url, "--storage-token", READ_TOKEN, "--log-format", "json"],
                  "%s/%s.log" % (self.work, name))
        return p, url

    @staticmethod
    def ready(url, what, timeout=60):
        wait_until(lambda: http_get(url, 2)[0] == 200, timeout, what + " " + url, 0.05)

    def log_offset(self):
        return os.path.getsize(self.ingest_log)

    def push_records(self, offset):
        """Ingest's JSON log records with a took_ms written since `offset`."""
        with open(self.ingest_log, "rb") as f:
            f.seek(offset)
            lines = f.read().decode(errors="replace").splitlines()
        out = []
        for line in lines:
            if line.startswith("{"):
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if "took_ms" in rec:
                    out.append(rec)
        return out


def server_cost(records):
    """Sum of took_ms and of each phase over the push log records; rendered pages."""
    took, phases, rendered = 0.0, {}, 0
    for r in records:
        took += float(r.get("took_ms", 0))
        rendered += int(r.get("rendered", 0) or 0)
        for k, v in re.findall(r"([A-Za-z_]+)=(\d+(?:\.\d+)?)", str(r.get("phases_ms", ""))):
            phases[k] = phases.get(k, 0.0) + float(v)
    return took, phases, rendered


PUSH_TIMEOUT_S = 3600  # --push-timeout


def folio_push(bin_dir, cluster, vault):
    """Runs `folio push`; (wall ms, stdout, warning lines). Raises if it fails or times out."""
    argv = [bin_dir + "/folio", "push", vault, "--server", cluster.ingest_url, "--token", TOKEN]
    t0 = time.monotonic()
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=PUSH_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise RuntimeError("folio push took more than --push-timeout %d s" % PUSH_TIMEOUT_S)
    ms = (time.monotonic() - t0) * 1000
    if r.returncode != 0:
        raise RuntimeError("folio push exited %d:\n%s\n%s" % (r.returncode, r.stdout[-2000:], r.stderr[-4000:]))
    return ms, r.stdout.strip(), [l for l in r.stderr.splitlines() if l.startswith("warning:")]


def wait_visible(base, rel, rev, timeout=600):
    needle = b"Revision %d." % rev
    url = base + urllib.request.quote(vaultgen.url_of(rel))
    wait_until(lambda: needle in http_get(url, 10)[1], timeout, "%s to show revision %d" % (url, rev))


class Recorder:
    def __init__(self, n, rows):
        self.n, self.rows = n, rows  # rows: shared by every size, so a failed size keeps what it measured

    def add(self, metric, value, unit):
        self.rows.append((self.n, metric, value, unit))
        print("  %-28s %14s %s" % (metric, scale_report.fmt(value), unit), flush=True)

    def push(self, prefix, cli_ms, took, phases, rendered):
        self.add(prefix + "_cli_ms", cli_ms, "ms")
        self.add(prefix + "_server_ms", took, "ms")
        for k in sorted(phases):
            self.add("%s_phase_%s_ms" % (prefix, k), phases[k], "ms")
        self.add(prefix + "_pages_rendered", rendered, "pages")


def measure_import(rec, bin_dir, c, v):
    off, before = c.log_offset(), metrics(c.ingest_url)
    t0 = time.monotonic()
    try:
        cli_ms, out, warnings = folio_push(bin_dir, c, v.root)
    except RuntimeError:
        records = c.push_records(off)
        took, phases, _ = server_cost(records[-1:])
        print("  import stopped after %.0f s: %d pushes committed; the last took %.0f ms (%s)" %
              (time.monotonic() - t0, len(records), took, " ".join("%s=%.0f" % kv for kv in sorted(phases.items()))))
        raise
    records = c.push_records(off)
    took, phases, rendered = server_cost(records)
    after = metrics(c.ingest_url)
    key = "folio_ingest_pages_rendered_total"
    if key in after:
        rendered = after[key] - before.get(key, 0.0)
    print("  %s" % (out.splitlines()[-1] if out else "folio: (no output)"))
    print("  %d warnings%s" % (len(warnings), "".join("\n    " + w for w in warnings[:5])))
    rec.push("import", cli_ms, took, phases, rendered)
    rec.add("import_server_records", len(records), "records")
    wait_visible(c.edge_url, v.notes[-1], 1)
    rec.add("import_visible_ms", (time.monotonic() - t0) * 1000, "ms")


def edge_settled(url, quiet_s=2.5, timeout=600):
    """Waits until the edge has applied everything: no bus lag, and its applied revision and page
    count unchanged for quiet_s (the lag gauge is refreshed every 2 s)."""
    last, since = None, time.monotonic()
    deadline = since + timeout
    while time.monotonic() < deadline:
        m = metrics(url)
        now = (m.get("folio_edge_applied_revision"), m.get("folio_edge_pages"))
        if now != last or m.get("folio_edge_bus_lag", 0) != 0:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            return m
        time.sleep(0.1)
    raise RuntimeError("edge %s did not settle in %d s" % (url, timeout))


def measure_resources(rec, c):
    # The outbox drained and the edge caught up: everything committed is in NATS and in the
    # edge's memory before sizes are read.
    wait_until(lambda: metrics(c.ingest_url).get("folio_ingest_outbox_pending", 0) == 0, 600, "outbox drained", 0.1)
    edge_settled(c.edge_url)
    for name, p in (("nats", c.nats), ("ingest", c.ingest), ("edge", c.edge), ("storage", c.storage)):
        rec.add("rss_%s_bytes" % name, rss_bytes(p.pid), "bytes")
    for name in ("nats", "ingest", "storage"):
        rec.add("data_%s_bytes" % name, dir_bytes(os.path.join(c.work, name)), "bytes")
    em = metrics(c.edge_url)
    for key, name, unit in (("folio_edge_page_bytes", "edge_page_bytes", "bytes"), ("folio_edge_pages", "edge_pages", "pages")):
        if key in em:
            rec.add(name, em[key], unit)
    if em.get("folio_edge_page_bytes"):  # issue 12's target: at most 1.3
        rec.add("edge_rss_per_page_byte", rss_bytes(c.edge.pid) / em["folio_edge_page_bytes"], "ratio")


def measure_fresh_edge(rec, c, v):
    t0 = time.monotonic()
    p, url = c.start_edge("edge2")
    wait_until(lambda: http_get(url + "/readyz", 2)[0] == 200, 600, "the second edge's /readyz")
    rec.add("edge2_ready_ms", (time.monotonic() - t0) * 1000, "ms")
    status, body = http_get(url + urllib.request.quote(vaultgen.url_of(v.notes[-1])))
    if status != 200 or b"Revision 1." not in body:
        raise RuntimeError("the second edge is ready but answers %d for %s" % (status, v.notes[-1]))
    rec.add("rss_edge2_bytes", rss_bytes(p.pid), "bytes")
    rec.add("edge2_pages_at_ready", metrics(url).get("folio_edge_pages", -1), "pages")
    stop(p)


def measure_one_note(rec, bin_dir, c, v, reps):
    n = len(v.notes)
    cli, server, visible, rendered, rows, phases = [], [], [], [], {}, {}
    for k in range(reps):
        rel = v.notes[(n // 2 + 7919 * k) % n]
        vaultgen.set_revision(v.path(rel), 2 + k)
        off, before = c.log_offset(), metrics(c.ingest_url)
        t0 = time.monotonic()
        cli_ms, _, _ = folio_push(bin_dir, c, v.root)
        took, ph, rend = server_cost(c.push_records(off))
        wait_visible(c.edge_url, rel, 2 + k)
        visible.append((time.monotonic() - t0) * 1000)
        after = metrics(c.ingest_url)
        key = "folio_ingest_pages_rendered_total"
        rendered.append(after[key] - before.get(key, 0.0) if key in after else rend)
        for name in row_counters(after):
            rows.setdefault(name, []).append(after[name] - before.get(name, 0.0))
        cli.append(cli_ms)
        server.append(took)
        for kk, vv in ph.items():
            phases.setdefault(kk, []).append(vv)
    med = statistics.median
    rec.push("one_note", med(cli), med(server), {k: med(x) for k, x in phases.items()}, med(rendered))
    rec.add("one_note_visible_ms", med(visible), "ms")
    if not rows:
        print("  (ingest's /metrics has no counter of SQL rows: rows touched per push not measured)")
    for name, vals in rows.items():
        rec.add("one_note_sql_rows", med(vals), "rows (%s)" % name)


def measure_one_percent(rec, bin_dir, c, v):
    n = len(v.notes)
    m = max(1, n // 100)
    picked = [v.notes[(j * n // m + 37) % n] for j in range(m)]
    for rel in picked:
        vaultgen.set_revision(v.path(rel), 100)
    off = c.log_offset()
    t0 = time.monotonic()
    cli_ms, _, _ = folio_push(bin_dir, c, v.root)
    records = c.push_records(off)
    took, _, rendered = server_cost(records)
    wait_visible(c.edge_url, picked[-1], 100)
    visible = (time.monotonic() - t0) * 1000
    rec.add("pct1_notes", m, "notes")
    rec.add("pct1_cli_ms", cli_ms, "ms")
    rec.add("pct1_server_ms", took, "ms")
    rec.add("pct1_visible_ms", visible, "ms")
    rec.add("pct1_cli_ms_per_note", cli_ms / m, "ms")
    rec.add("pct1_server_ms_per_note", took / m, "ms")


def run_size(n, a, work, rows):
    rec = Recorder(n, rows)
    print("== %d notes (load average %s)" % (n, open("/proc/loadavg").read().split()[0]), flush=True)
    t0 = time.monotonic()
    v = vaultgen.generate(os.path.join(work, "vault"), n, a.seed)
    print("  vault generated in %.1f s: %d notes, %d hubs, %d attachments" %
          (time.monotonic() - t0, len(v.notes), len(v.hubs), len(v.attachments)), flush=True)
    rec.add("vault_bytes", dir_bytes(v.root), "bytes")
    c = Cluster(a.bin, work)
    try:
        measure_import(rec, a.bin, c, v)
        measure_resources(rec, c)
        measure_fresh_edge(rec, c, v)
        measure_one_note(rec, a.bin, c, v, a.reps)
        measure_one_percent(rec, a.bin, c, v)
    finally:
        stop_all()


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--sizes", default=os.environ.get("SIZES", "1000,10000,100000"))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--csv", default=os.path.join(root, "loadtest/results/scale-bench.csv"))
    ap.add_argument("--keep", action="store_true", help="keep the vaults and data dirs (printed)")
    ap.add_argument("--append", action="store_true", help="keep the CSV's rows of sizes not measured in this run "
                    "(e.g. add SIZES=100000 to an earlier run of the smaller sizes)")
    ap.add_argument("--check-growth", type=float, default=0.0, metavar="X", help="exit 1 if a per-push cost "
                    "grew more than X times from the smallest size to the largest (scale_report.FLAT)")
    ap.add_argument("--push-timeout", type=int, default=3600, help="seconds one folio push may take; "
                    "past it the size stops there (what it measured is kept) and the next one starts")
    a = ap.parse_args()
    global PUSH_TIMEOUT_S
    PUSH_TIMEOUT_S = a.push_timeout
    a.bin = os.path.join(root, a.build, "bin") if not os.path.isabs(a.build) else os.path.join(a.build, "bin")
    sizes = [int(s) for s in a.sizes.split(",") if s.strip()]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    rows = []
    if a.append and os.path.exists(a.csv):
        old = scale_report.read_csv(a.csv)
        rows = [(n, m, v, u) for m, by in old.items() for n, (v, u) in sorted(by.items()) if n not in sizes]
    print("scale-bench: sizes %s, %d reps of the one-note push; %d CPUs, services unpinned; %s" %
          (sizes, a.reps, os.cpu_count(), time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())), flush=True)
    try:
        for n in sizes:
            work = tempfile.mkdtemp(prefix="scale-bench-%d-" % n)
            try:
                run_size(n, a, work, rows)
            except RuntimeError as e:
                print("  %d notes: stopped: %s" % (n, e), flush=True)
            finally:
                if a.keep:
                    print("  kept %s" % work)
                else:
                    shutil.rmtree(work, ignore_errors=True)
            scale_report.write_csv(a.csv, rows)
    finally:
        stop_all()
    sys.exit(0 if scale_report.report(a.csv, a.check_growth) else 1)


if __name__ == "__main__":
    main()
