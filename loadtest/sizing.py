#!/usr/bin/env python3
"""Memory, CPU and disk for folio on Kubernetes, from the benchmarks' results.

    python3 loadtest/sizing.py                 # the sizing table (markdown), as in README.md
    python3 loadtest/sizing.py --json          # the same numbers, for tests
    python3 loadtest/sizing.py --patch 100000  # a kustomize patch sizing every container for N notes

Reads loadtest/results/scale-bench.csv (RSS of edge, ingest and nats-server and their data
after importing 1k, 10k and 100k notes; loadtest/scale-bench.sh), ingest-memory.csv (ingest's
RSS at 10k from another bench: the larger of the two is taken) and search-bench-*.csv (search's
memory growth importing 10k notes; loadtest/search-bench.sh). Sizes between measured ones are
interpolated linearly, sizes past the largest extrapolated linearly through the two largest
(the cost at the largest plus the cost per added note between them), as scale_report.py does
for its 1M table; each row says which. "Notes" are the total over every site: every edge holds
every site's pages. Python 3 standard library only.
"""
import csv
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
MIB = 1 << 20
SIZES = [10000, 30000, 100000, 300000, 1000000]

# What the formulas add, and why (README "Sizing" prints these).
HEADROOM = 1.5                # x measured RSS: replay/import peaks, allocator slack
ASSET_CACHE_MIB = 128         # the edge's FOLIO_ASSET_CACHE
EDGE_STREAMS_MIB = 64         # 1 MiB per large asset streamed through an edge, 64 at once
INGEST_MAX_BODY = max(64 << 20, (64 << 20) // 3 * 4 + (1 << 20))  # --max-body grown to a base64 attachment
INGEST_INFLIGHT_MIB = 4 * INGEST_MAX_BODY / MIB  # --max-inflight-body-bytes default: bodies held at once
SEARCH_BASE_MIB = 64          # search's process before its index (not measured separately)
NATS_MEMORY_STORE_MIB = 256   # nats.conf max_memory_store
STORAGE_IO_MIB = 128          # storage streams blobs: 8 I/O threads' buffers and slack
BACKUP_KEEP = 7               # ingest --backup-keep: backups kept in storage (and JetStream)
# CPU (request, limit): what the services are pinned to (FOLIO_THREADS, FOLIO_RENDER_THREADS,
# FOLIO_QUERY_THREADS = the limit); CPU is throttled, not fatal, so requests stay below limits.
CPU = {"edge": ("250m", "2"), "ingest": ("500m", "2"), "search": ("500m", "2"),
       "nats": ("250m", "1"), "storage": ("100m", "1")}
# Which Kubernetes object and container each one is.
WORKLOADS = {"edge": ("Deployment", "edge", "edge"), "ingest": ("StatefulSet", "ingest", "ingest"),
             "search": ("StatefulSet", "search", "search"), "nats": ("StatefulSet", "nats", "nats"),
             "storage": ("StatefulSet", "storage", "storage")}


def load_scale(path):
    """{notes: {metric: value}} of scale-bench.csv."""
    out = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            out.setdefault(int(row["notes"]), {})[row["metric"]] = float(row["value"])
    return out


def measured():
    """{metric: {notes: MiB or bytes}} of everything the sizing uses."""
    scale = load_scale(os.path.join(RESULTS, "scale-bench.csv"))
    m = {k: {} for k in ("edge", "ingest", "nats", "storage", "search_growth", "data_nats", "data_ingest")}
    for n, v in scale.items():
        m["edge"][n] = max(v["rss_edge_bytes"], v.get("rss_edge2_bytes", 0)) / MIB  # a fresh edge too
        m["ingest"][n] = v["rss_ingest_bytes"] / MIB
        m["nats"][n] = v["rss_nats_bytes"] / MIB
        m["storage"][n] = v["rss_storage_bytes"] / MIB
        m["data_nats"][n] = v["data_nats_bytes"]
        m["data_ingest"][n] = v["data_ingest_bytes"]
    with open(os.path.join(RESULTS, "ingest-memory.csv")) as f:
        for row in csv.DictReader(f):
            n = int(row["notes"])
            m["ingest"][n] = max(m["ingest"].get(n, 0), float(row["ingest_rss_mb"]))
    for path in sorted(glob.glob(os.path.join(RESULTS, "search-bench-*.csv"))):
        with open(path) as f:
            for row in csv.DictReader(f):
                n = int(row["notes"])
                m["search_growth"][n] = max(m["search_growth"].get(n, 0), float(row["rss_mb"]))
    return m


def at(series, n):
    """(value at n, how): measured, interpolated or extrapolated linearly (through the two
    largest sizes measured; one size measured: in proportion to the notes)."""
    xs = sorted(series)
    if n in series:
        return series[n], "measured"
    if len(xs) == 1:
        return series[xs[0]] * n / xs[0], "extrapolated"
    if xs[0] < n < xs[-1]:
        lo = max(x for x in xs if x < n)
        hi = min(x for x in xs if x > n)
        return series[lo] + (series[hi] - series[lo]) * (n - lo) / (hi - lo), "interpolated"
    a, b = (xs[0], xs[1]) if n < xs[0] else (xs[-2], xs[-1])
    return series[b] + (series[b] - series[a]) * (n - b) / (b - a), "extrapolated"


def round_mib(x):
    """Up to 64 MiB steps below 1 GiB, 256 MiB steps above."""
    step = 64 if x <= 1024 else 256
    return int(-(-x // step) * step)


def size(m, n):
    """Every container's memory (MiB) and the notes-dependent disk (bytes) at n notes."""
    edge, how = at(m["edge"], n)
    ingest, _ = at(m["ingest"], n)
    nats, _ = at(m["nats"], n)
    storage, _ = at(m["storage"], n)
    growth, _ = at(m["search_growth"], n)
    search = SEARCH_BASE_MIB + growth
    data_nats, _ = at(m["data_nats"], n)
    data_ingest, _ = at(m["data_ingest"], n)
    mem = {
        # An edge's steady state is its pages plus the asset cache; the limit adds headroom
        # for the replay and the assets streamed through it.
        "edge": (edge, round_mib(edge + ASSET_CACHE_MIB),
                 round_mib(edge * HEADROOM + ASSET_CACHE_MIB + EDGE_STREAMS_MIB)),
        "ingest": (ingest, None, round_mib(ingest * HEADROOM + INGEST_INFLIGHT_MIB)),
        "search": (search, None, round_mib(search * HEADROOM)),
        "nats": (nats, None, round_mib(nats * HEADROOM + NATS_MEMORY_STORE_MIB)),
        "storage": (storage, None, round_mib(storage * HEADROOM + STORAGE_IO_MIB)),
    }
    out = {"notes": n, "how": how, "search_measured": n in m["search_growth"], "memory": {}}
    for svc, (rss, req, limit) in mem.items():
        out["memory"][svc] = {"rss_mib": round(rss), "request": f"{req or limit}Mi", "limit": f"{limit}Mi"}
    # Disk that grows with the notes (attachments come on top): JetStream holds the pages
    # and, with storage --replicated, every backup; ingest's PVC holds its database twice
    # (the database and a backup being written).
    out["disk"] = {"nats_gib": (data_nats + BACKUP_KEEP * data_ingest) / (1 << 30),
                   "ingest_gib": 2 * data_ingest / (1 << 30),
                   "storage_gib": BACKUP_KEEP * data_ingest / (1 << 30)}
    return out


def table(m):
    lines = [
        "| total notes (all sites) | edge: RSS → request / limit | ingest: RSS → request = limit "
        "| search: RSS → request = limit | NATS: RSS → request = limit | storage: RSS → request = limit "
        "| disk by notes: NATS / ingest / storage |",
        "|---|---|---|---|---|---|---|",
    ]
    for n in SIZES:
        s = size(m, n)
        mem = s["memory"]
        cell = lambda svc, mark="": (f"{mem[svc]['rss_mib']:,} MiB{mark} → {mem[svc]['request']}"
                                     + (f" / {mem[svc]['limit']}" if svc == "edge" else ""))
        d = s["disk"]
        how = s["how"] if s["how"] == "measured" else f"*{s['how']}*"
        lines.append(
            f"| {n:,} ({how}) | {cell('edge')} | {cell('ingest')} "
            f"| {cell('search', '' if s['search_measured'] else ' (est.)')} | {cell('nats')} | {cell('storage')} "
            f"| {d['nats_gib']:.1f} / {d['ingest_gib']:.1f} / {d['storage_gib']:.1f} GiB |")
    cpu = ", ".join(f"{svc} {r} / {l}" for svc, (r, l) in CPU.items())
    sizes = sorted(m["search_growth"])
    measured_search = " and ".join(f"{n:,}" for n in sizes) if sizes else "no"
    lines += [
        "",
        f"RSS as measured after an import (scale-bench; search: its engine's growth in search-bench "
        f"plus {SEARCH_BASE_MIB} MiB, measured at {measured_search} notes; the other rows are estimates). "
        f"Limits: edge {HEADROOM}× RSS + the {ASSET_CACHE_MIB} MiB asset cache + {EDGE_STREAMS_MIB} MiB of "
        f"streamed assets (its request: RSS + the cache); ingest {HEADROOM}× RSS + "
        f"{INGEST_INFLIGHT_MIB:.0f} MiB of push bodies in flight (4 × its 86.3 MiB largest body); search "
        f"{HEADROOM}× RSS; NATS {HEADROOM}× RSS + its {NATS_MEMORY_STORE_MIB} MiB memory store; storage "
        f"{HEADROOM}× RSS + {STORAGE_IO_MIB} MiB of I/O buffers; rounded up to 64 MiB (256 MiB past 1 GiB). "
        f"CPU (request / limit, every size): {cpu}. Disk that grows with the notes, attachments "
        f"not included: NATS holds the pages and, with storage replicated, {BACKUP_KEEP} backups of "
        f"ingest's database; ingest's PVC twice its database; storage {BACKUP_KEEP} backups.",
    ]
    return "\n".join(lines)


def patch(m, n):
    """A patchesStrategicMerge file setting every container's resources for n notes."""
    s = size(m, n)
    docs = [f"# Resources for {n:,} notes in total over all sites, generated by\n"
            f"#   python3 loadtest/sizing.py --patch {n}\n"
            f"# from the benchmarks (README \"Sizing\"). Regenerate, do not edit by hand."]
    for svc, (kind, name, container) in WORKLOADS.items():
        mem = s["memory"][svc]
        docs.append(
            f"apiVersion: apps/v1\nkind: {kind}\nmetadata:\n  name: {name}\nspec:\n  template:\n    spec:\n"
            f"      containers:\n      - name: {container}\n        resources:\n"
            f"          requests:\n            cpu: {CPU[svc][0]}\n            memory: {mem['request']}\n"
            f"          limits:\n            cpu: \"{CPU[svc][1]}\"\n            memory: {mem['limit']}")
    return docs[0] + "\n" + "\n---\n".join(docs[1:]) + "\n"


def main(argv):
    m = measured()
    if argv[:1] == ["--json"]:
        print(json.dumps([size(m, n) for n in SIZES] if len(argv) == 1 else size(m, int(argv[1])), indent=1))
    elif argv[:1] == ["--patch"] and len(argv) == 2:
        sys.stdout.write(patch(m, int(argv[1])))
    elif not argv:
        print(table(m))
    else:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
