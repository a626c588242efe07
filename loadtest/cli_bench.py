#!/usr/bin/env python3
"""Where `folio push` of one changed note spends its time in a large vault (issue 26).

Starts nats-server -js, folio-storage and folio-ingest on free loopback ports (as scale_bench
does, without an edge), imports VAULT (made by loadtest/vaultgen.py) once, then runs --runs
pushes that each change one note, alternating the `folio` binaries given with --folio (old vs
new in the same run; each on its own hard-linked copy of VAULT, which must be on the same file
system as $TMPDIR). Prints, per binary, the median end-to-end wall time, the CLI's CPU time
(user + sys of the process), the server's took_ms, and the median of each phase the CLI reports
with --timings.

  python3 loadtest/vaultgen.py --notes 100000 /tmp/v
  python3 loadtest/cli_bench.py --vault /tmp/v --folio build/bin/folio [--folio old/folio]
"""
import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scale_bench as sb  # noqa: E402


def push(prefix, url, vault, extra=()):
    """Runs `prefix... push VAULT --timings`: (wall ms, CPU ms, {phase: ms}, stdout)."""
    argv = list(prefix) + ["push", vault, "--server", url, "--token", sb.TOKEN, "--timings"] + list(extra)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    r = subprocess.run(argv, capture_output=True, text=True, timeout=3600)
    wall = (time.monotonic() - t0) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) * 1000
    if r.returncode not in (0, 3):
        raise RuntimeError("folio push exited %d:\n%s\n%s" % (r.returncode, r.stdout[-2000:], r.stderr[-2000:]))
    phases = {}
    for line in r.stderr.splitlines():
        if line.startswith("folio: timings"):
            phases = {k: float(v) for k, v in re.findall(r"(\w+)=([\d.]+)", line)}
    return wall, cpu, phases, r.stdout.strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vault", required=True)
    ap.add_argument("--folio", action="append", required=True, help="folio binary (repeat to compare)")
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "build", "bin"))
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--cpu", default="1", help="taskset CPU list for the CLI ('' = none)")
    args = ap.parse_args()
    bin_dir = os.path.abspath(args.bin)
    work = tempfile.mkdtemp(prefix="cli-bench-")
    nats_port, mon = sb.free_port(), sb.free_port()
    try:
        sb.start(["/usr/sbin/nats-server", "-js", "-a", "127.0.0.1", "-p", str(nats_port), "-m", str(mon),
                  "-sd", work + "/nats"], work + "/nats.log")
        sb.Cluster.ready("http://127.0.0.1:%d/healthz?js-enabled-only=true" % mon, "nats-server")
        storage = "http://127.0.0.1:%d" % sb.free_port()
        sb.start([bin_dir + "/folio-storage", "--listen", storage[7:], "--data", work + "/storage",
                  "--write-token", sb.WRITE_TOKEN, "--read-token", sb.READ_TOKEN], work + "/storage.log")
        sb.Cluster.ready(storage + "/readyz", "folio-storage")
        url = "http://127.0.0.1:%d" % sb.free_port()
        sb.start([bin_dir + "/folio-ingest", "--listen", url[7:], "--nats", "nats://127.0.0.1:%d" % nats_port,
                  "--data", work + "/ingest", "--token", sb.TOKEN, "--storage", storage,
                  "--storage-token", sb.WRITE_TOKEN, "--log-format", "json"], work + "/ingest.log")
        sb.Cluster.ready(url + "/readyz", "folio-ingest")
        t0 = time.monotonic()
        push([os.path.abspath(args.folio[0])], url, args.vault, ["--full"])
        print("import: %.1f s" % (time.monotonic() - t0), flush=True)
        # Each binary pushes its own copy (hard links: one edit reaches every copy), so that
        # their indexes do not mix; each push also sees the other binaries' edits (hashed, not sent).
        vaults = {args.folio[0]: args.vault}
        for k, f in enumerate(args.folio[1:], 1):
            vaults[f] = os.path.join(work, "vault-%d" % k)
            subprocess.run(["cp", "-al", args.vault, vaults[f]], check=True)
        notes = sorted(os.path.join(d, f) for d, _, fs in os.walk(args.vault) for f in fs if f.endswith(".md")
                       and "/." not in d + "/")
        rows = {f: [] for f in args.folio}
        for i in range(args.runs):
            for j, f in enumerate(args.folio):
                with open(notes[((i * len(args.folio) + j) * 7919) % len(notes)], "a") as out:
                    out.write("\nEdit %d of the CLI bench.\n" % time.monotonic_ns())
                time.sleep(1.1)  # past the index's racy margin, as an author's next save is
                prefix = (["taskset", "-c", args.cpu] if args.cpu else []) + [os.path.abspath(f)]
                wall, cpu, phases, out = push(prefix, url, vaults[f])
                rows[f].append((wall, cpu, phases))
                print("%s: %.1f ms wall, %.1f ms cpu  %s  [%s]" % (f, wall, cpu, " ".join(
                    "%s=%.1f" % kv for kv in phases.items()), out), flush=True)
        for f, rs in rows.items():
            med = lambda xs: statistics.median(xs) if xs else float("nan")  # noqa: E731
            keys = sorted({k for _, _, p in rs for k in p})
            print("median %s over %d: wall %.1f ms, cpu %.1f ms; %s" % (
                f, len(rs), med([r[0] for r in rs]), med([r[1] for r in rs]),
                " ".join("%s=%.1f" % (k, med([p[k] for _, _, p in rs if k in p])) for k in keys)))
    finally:
        sb.stop_all()


if __name__ == "__main__":
    main()
