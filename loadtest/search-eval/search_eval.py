#!/usr/bin/env python3
"""search-eval: how often folio-search puts the right note on top for a reader's question (issue 27).

    python3 loadtest/search-eval/search_eval.py [--vaults DIR] [--questions FILE] [--mode hybrid]
        [--vault tasks] [--verbose] [--csv] [--label TEXT] [--embed-url URL [--embed-model M]
        [--embed-dim N]] [--search-arg=--flag=value ...] [--keep]

FOLIO_BIN_DIR (default ./build/bin) names the build under test, so two builds can be compared
on the same questions. DIR (default $SEARCH_EVAL_VAULTS, else ~/.cache/folio-search-eval/vaults,
as fetch-vaults.sh leaves it) holds one folder per vault, named as questions.tsv's first column.

It starts nats-server -js, folio-ingest and folio-search on free loopback ports in a temp dir,
adds one site per vault (`folio-ingest site add`), pushes each vault with `folio push`, waits
until search has indexed every note, then asks every question in every mode (text, vector,
hybrid) through GET /api/v1/search?site=&q=&mode=&k=10 and prints, per vault and overall and
per mode: top-1, top-3 and top-10 hit rates (a hit: any expected note at that rank or better),
MRR (1/rank of the first expected note, 0 past 10) and the median query latency (the server's
took_us). Then every hybrid question that misses the top 3, with the rank it got and the top 3
paths returned. --csv appends one summary row per vault and mode (and "all") to
loadtest/results/search-eval.csv. Every process it starts is stopped on exit, also on Ctrl-C.
"""
import argparse
import csv
import datetime
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
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from loopback import free_port, http_get, wait_until  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MODES = ("text", "vector", "hybrid")
K = 10
HELD_OUT = "obsidian-help"  # obsidianmd/obsidian-help: kept for independent evaluation, never here
TOKEN = "search-eval-token"
CHILDREN = []  # every process started here; stopped by stop_all


def read_questions(path):
    """[(vault, question, [expected paths], tag)] from questions.tsv; raises ValueError on a bad line."""
    out = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            cols = line.split("\t")
            if len(cols) != 4:
                raise ValueError("%s:%d: %d columns, want 4 (vault, question, paths, tag)" % (path, n, len(cols)))
            vault, q, paths, tag = (c.strip() for c in cols)
            expected = [p.strip() for p in paths.split("|") if p.strip()]
            if not vault or not q or not expected or not tag:
                raise ValueError("%s:%d: an empty column" % (path, n))
            if vault == HELD_OUT:
                raise ValueError("%s:%d: %s is held out for independent evaluation" % (path, n, HELD_OUT))
            if not re.fullmatch(r"[a-z0-9-]+", vault):
                raise ValueError("%s:%d: vault %r is not a site id ([a-z0-9-]+)" % (path, n, vault))
            out.append((vault, q, expected, tag))
    return out


def start(argv, log):
    with open(log, "ab") as f:
        # Its own process group: a Ctrl-C at the terminal reaches only this script, which
        # then stops the children in order (search, ingest, then NATS).
        p = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             start_new_session=True)
    CHILDREN.append(p)
    return p


def stop_all():
    for p in reversed(CHILDREN):
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in reversed(CHILDREN):
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    CHILDREN.clear()


def metric(base, name):
    """Sum of the samples of family `name` at base/metrics, or None."""
    status, body = http_get(base + "/metrics", 5)
    if status != 200:
        return None
    total, seen = 0.0, False
    for line in body.decode(errors="replace").splitlines():
        m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)", line)
        if m and m.group(1) == name:
            total, seen = total + float(m.group(3)), True
    return total if seen else None


def ready(url, what, timeout=60):
    wait_until(lambda: http_get(url, 2)[0] == 200, timeout, what + " " + url)


class Services:
    """nats-server -js, folio-ingest (one site per vault) and folio-search in dir `work`."""

    def __init__(self, bin_dir, work, search_args):
        self.bin, self.work = bin_dir, work
        nats = shutil.which("nats-server") or "/usr/sbin/nats-server"
        nats_port, mon = free_port(), free_port()
        start([nats, "-js", "-a", "127.0.0.1", "-p", str(nats_port), "-m", str(mon), "-sd", work + "/nats"],
              work + "/nats.log")
        ready("http://127.0.0.1:%d/healthz?js-enabled-only=true" % mon, "nats-server")
        self.nats = "nats://127.0.0.1:%d" % nats_port
        self.ingest_data = work + "/ingest"
        os.makedirs(self.ingest_data)
        self.ingest_url = "http://127.0.0.1:%d" % free_port()
        start([bin_dir + "/folio-ingest", "--listen", self.ingest_url[7:], "--nats", self.nats,
               "--data", self.ingest_data, "--token", TOKEN, "--site-name", "search-eval",
               "--instance", "search-eval"], work + "/ingest.log")
        ready(self.ingest_url + "/readyz", "folio-ingest")
        self.search_url = "http://127.0.0.1:%d" % free_port()
        start([bin_dir + "/folio-search", "--listen", self.search_url[7:], "--nats", self.nats,
               "--data", work + "/search", "--replica-id", "eval"] + search_args, work + "/search.log")
        ready(self.search_url + "/livez", "folio-search")

    def check_alive(self):
        """Raises if a service has exited, with the end of its log."""
        for p, log in zip(CHILDREN, ("nats", "ingest", "search")):
            if p.poll() is not None:
                with open("%s/%s.log" % (self.work, log), errors="replace") as f:
                    tail = f.read()[-2000:]
                raise RuntimeError("%s exited with %s:\n%s" % (log, p.returncode, tail))

    def add_site(self, name):
        """The API token of a new site `name` (folio-ingest site add prints it on stdout)."""
        r = subprocess.run([self.bin + "/folio-ingest", "site", "add", name, "--data", self.ingest_data,
                            "--host", name + ".search-eval.invalid", "--title", name],
                           capture_output=True, text=True, timeout=60)
        tokens = [l.strip() for l in r.stdout.splitlines() if re.fullmatch(r"[0-9a-f]{32,}", l.strip())]
        if r.returncode != 0 or not tokens:
            raise RuntimeError("site add %s failed: %s%s" % (name, r.stdout, r.stderr))
        return tokens[-1]

    def push(self, vault_dir, token):
        """`folio push`, retried while ingest has not picked up the new site yet."""
        for attempt in range(30):
            r = subprocess.run([self.bin + "/folio", "push", vault_dir, "--server", self.ingest_url,
                                "--token", token], capture_output=True, text=True, timeout=600)
            if r.returncode == 0:
                return
            time.sleep(0.5)
        raise RuntimeError("folio push %s failed:\n%s%s" % (vault_dir, r.stdout, r.stderr))


def published(path):
    """False for a note whose frontmatter says publish: false (folio leaves it out of search)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        if f.readline().strip() != "---":
            return True
        for line in f:
            if line.strip() == "---":
                return True
            if re.fullmatch(r"publish:\s*(false|no)\s*", line.strip(), re.IGNORECASE):
                return False
    return True


def note_count(vault_dir):
    """The notes of vault_dir that search should hold."""
    n = 0
    for root, dirs, files in os.walk(vault_dir):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        n += sum(1 for f in files if f.endswith(".md") and published(os.path.join(root, f)))
    return n


def wait_indexed(svc, expected, timeout):
    """Until folio-search holds `expected` notes (folio_search_notes); if push skipped some files,
    until the count has stood still for 5 s."""
    deadline = time.monotonic() + timeout
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        svc.check_alive()
        n = metric(svc.search_url, "folio_search_notes")
        if n is not None and int(n) == expected and http_get(svc.search_url + "/readyz", 2)[0] == 200:
            return int(n)
        if n != last:
            last, since = n, time.monotonic()
        elif n and time.monotonic() - since > 5 and http_get(svc.search_url + "/readyz", 2)[0] == 200:
            print("note: search holds %d notes, %d .md files were pushed" % (int(n), expected), file=sys.stderr)
            return int(n)
        time.sleep(0.1)
    why = http_get(svc.search_url + "/readyz", 2)[1].decode(errors="replace").strip()
    raise RuntimeError("search did not index %d notes in %.0f s (holds %s; /readyz: %s)" % (expected, timeout, last, why))


def ask(svc, site, q, mode, k=None, scores=False):
    """(paths returned, server took_us) for one query; with scores, (path, score) pairs."""
    url = "%s/api/v1/search?%s" % (svc.search_url, urllib.parse.urlencode(
        {"site": site, "q": q, "mode": mode, "k": k or K}))
    status, body = http_get(url, 30)
    if status != 200:
        raise RuntimeError("%s -> %d %s" % (url, status, body[:200]))
    r = json.loads(body)
    if scores:
        return [(h["path"], h["score"]) for h in r["hits"]], int(r.get("took_us", 0))
    return [h["path"] for h in r["hits"]], int(r.get("took_us", 0))


def vector_evidence(svc, questions):
    """What the vector half's similarity says (issue 27): per question, the vector ranking's
    (path, similarity) pairs (k=50) and the notes the words find (text mode, k=50)."""
    out = {}
    for i, (v, q, _, _) in enumerate(questions):
        vec, _ = ask(svc, v, q, "vector", 50, scores=True)
        text, _ = ask(svc, v, q, "text", 50)
        out[i] = (vec, set(text))
    return out


def print_vector_evidence(questions, answers, evidence):
    """Similarity of the vector half's right and wrong notes, and what hybrid shows of notes
    the words do not find (vector-only hits): the evidence for --min-vector-score."""
    q = lambda xs, f: sorted(xs)[min(len(xs) - 1, int(f * len(xs)))] if xs else float("nan")
    right, wrong, only_right, only_wrong = [], [], [], []
    for i, (_, _, expected, _) in enumerate(questions):
        vec, lexical = evidence[i]
        sim = dict(vec)
        for rank, (path, score) in enumerate(vec[:3]):
            (right if path in expected else wrong).append(score)
        for path in answers[(i, "hybrid")][1]:
            if path not in lexical and path in sim:
                (only_right if path in expected else only_wrong).append(sim[path])
    print("\nvector similarity (built-in embedder unless --embed-url): p10 / p50 / p90")
    for name, xs in (("right notes in the vector top 3", right), ("wrong notes in the vector top 3", wrong),
                     ("hybrid hits the words do not find, right", only_right),
                     ("hybrid hits the words do not find, wrong", only_wrong)):
        if xs:
            print("  %-42s %4d   %.3f / %.3f / %.3f" % (name, len(xs), q(xs, .1), q(xs, .5), q(xs, .9)))
        else:
            print("  %-42s %4d" % (name, 0))


def rank_of(paths, expected):
    """1-based rank of the first expected note in paths, or 0."""
    for i, p in enumerate(paths):
        if p in expected:
            return i + 1
    return 0


def summarize(results):
    """{n, top1, top3, top10, mrr, p50_ms} over [(rank, took_us)]."""
    n = len(results)
    if n == 0:
        return None
    ranks = [r for r, _ in results]
    hit = lambda k: sum(1 for r in ranks if 0 < r <= k) / n
    return {"n": n, "top1": hit(1), "top3": hit(3), "top10": hit(10),
            "mrr": sum(1.0 / r for r in ranks if r) / n,
            "p50_ms": statistics.median(t for _, t in results) / 1000.0}


def git_commit(bin_dir):
    """The commit of the tree the binaries were built in (bin dir inside a worktree), else ROOT's."""
    for d in (bin_dir, ROOT):
        try:
            r = subprocess.run(["git", "-C", d, "rev-parse", "--short=12", "HEAD"], capture_output=True,
                               text=True, timeout=10)
            if r.returncode == 0:
                dirty = subprocess.run(["git", "-C", d, "status", "--porcelain", "-uno"], capture_output=True,
                                       text=True, timeout=10).stdout.strip()
                return r.stdout.strip() + ("-dirty" if dirty else "")
        except (OSError, subprocess.TimeoutExpired):
            pass
    return "unknown"


def print_table(table, vaults, modes):
    print("\n%-10s %-7s %4s %7s %7s %7s %6s %8s" % ("vault", "mode", "n", "top1", "top3", "top10", "mrr",
                                                 "p50_ms"))
    for v in vaults + ["all"]:
        for m in modes:
            s = table.get((v, m))
            if s:
                print("%-10s %-7s %4d %6.1f%% %6.1f%% %6.1f%% %6.3f %8.2f" % (
                    v, m, s["n"], 100 * s["top1"], 100 * s["top3"], 100 * s["top10"], s["mrr"], s["p50_ms"]))


def write_csv(path, table, commit, label):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    new = not os.path.exists(path) or os.path.getsize(path) == 0
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    with open(path, "a", newline="") as f:
        w = csv.writer(f)
        if new:
            w.writerow(["date", "commit", "vault", "mode", "n", "top1", "top3", "top10", "mrr", "p50_ms", "label"])
        for (v, m), s in table.items():
            w.writerow([date, commit, v, m, s["n"], "%.4f" % s["top1"], "%.4f" % s["top3"], "%.4f" % s["top10"],
                        "%.4f" % s["mrr"], "%.3f" % s["p50_ms"], label])


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vaults", default=os.environ.get("SEARCH_EVAL_VAULTS",
                                                      os.path.expanduser("~/.cache/folio-search-eval/vaults")))
    ap.add_argument("--questions", default=os.path.join(HERE, "questions.tsv"))
    ap.add_argument("--mode", choices=MODES, action="append", help="only this mode (repeatable)")
    ap.add_argument("--vault", action="append", help="only this vault (repeatable)")
    ap.add_argument("--verbose", action="store_true", help="every question's rank and top 3 in every mode")
    ap.add_argument("--csv", nargs="?", const=os.path.join(ROOT, "loadtest/results/search-eval.csv"),
                    help="append summary rows (default loadtest/results/search-eval.csv)")
    ap.add_argument("--label", default="", help="free text in the CSV's label column (default: the bin dir)")
    ap.add_argument("--embed-url", default="", help="passed to folio-search (a model behind an HTTP endpoint)")
    ap.add_argument("--embed-model", default="")
    ap.add_argument("--embed-dim", default="")
    ap.add_argument("--search-arg", action="append", default=[],
                    help="one more folio-search flag, e.g. --search-arg=--min-vector-score=0.3 (repeatable)")
    ap.add_argument("--index-timeout", type=float, default=600)
    ap.add_argument("--keep", action="store_true", help="keep the temp dir (logs, data)")
    return ap.parse_args()


def run(args, questions, bin_dir):
    vaults = sorted({q[0] for q in questions})
    for v in vaults:
        if not os.path.isdir(os.path.join(args.vaults, v)):
            raise RuntimeError("no vault %s under %s (run loadtest/search-eval/fetch-vaults.sh)" % (v, args.vaults))
    search_args = list(args.search_arg)
    for flag, val in (("--embed-url", args.embed_url), ("--embed-model", args.embed_model),
                      ("--embed-dim", args.embed_dim)):
        if val:
            search_args += [flag, val]
    modes = tuple(args.mode) if args.mode else MODES
    work = tempfile.mkdtemp(prefix="search-eval-")
    try:
        t0 = time.monotonic()
        svc = Services(bin_dir, work, search_args)
        total = 0
        for v in vaults:
            # A copy is pushed: `folio push` keeps its index in the vault (.folio/), and the
            # vaults stay as fetched.
            copy = os.path.join(work, "vaults", v)
            shutil.copytree(os.path.join(args.vaults, v), copy, ignore=shutil.ignore_patterns(".*"))
            svc.push(copy, svc.add_site(v))
            total += note_count(copy)
        held = wait_indexed(svc, total, args.index_timeout)
        print("%s: %d vault(s), %d notes indexed in %.1f s; %d questions" % (
            bin_dir, len(vaults), held, time.monotonic() - t0, len(questions)))
        answers = {}  # (index, mode) -> (rank, paths, took_us)
        for i, (v, q, expected, _) in enumerate(questions):
            for m in modes:
                paths, took = ask(svc, v, q, m)
                answers[(i, m)] = (rank_of(paths, expected), paths, took)
        evidence = vector_evidence(svc, questions) if "hybrid" in modes else None
    finally:
        stop_all()
        if args.keep:
            print("kept", work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return vaults, modes, answers, evidence


def report(args, questions, vaults, modes, answers, bin_dir, evidence=None):
    table = {}
    for v in vaults + ["all"]:
        for m in modes:
            rows = [answers[(i, m)] for i, q in enumerate(questions) if v in ("all", q[0])]
            table[(v, m)] = summarize([(r, t) for r, _, t in rows])
    print_table(table, vaults, modes)
    print("\ntop-3 by tag:")
    for tag in sorted({q[3] for q in questions}):
        idx = [i for i, q in enumerate(questions) if q[3] == tag]
        print("  %-8s %3d  " % (tag, len(idx)) + "  ".join(
            "%s %5.1f%%" % (m, 100.0 * sum(1 for i in idx if 0 < answers[(i, m)][0] <= 3) / len(idx))
            for m in modes))
    show = lambda r: str(r) if r else ">%d" % K
    if args.verbose:
        print("\nevery question (rank per mode; top 3 of the last mode):")
        for i, (v, q, expected, tag) in enumerate(questions):
            ranks = " ".join("%s=%s" % (m, show(answers[(i, m)][0])) for m in modes)
            print("  [%s/%s] %r  %s\n      want %s\n      got  %s" % (v, tag, q, ranks, " | ".join(expected),
                                                                  " | ".join(answers[(i, modes[-1])][1][:3])))
    if "hybrid" in modes:
        misses = [(i, q) for i, q in enumerate(questions) if not 0 < answers[(i, "hybrid")][0] <= 3]
        print("\nhybrid misses at top 3 (%d of %d):" % (len(misses), len(questions)))
        for i, (v, q, expected, tag) in misses:
            r, paths, _ = answers[(i, "hybrid")]
            print("  [%s/%s] %r: rank %s (text %s, vector %s)\n      want %s\n      got  %s" % (
                v, tag, q, show(r), show(answers.get((i, "text"), (0,))[0]),
                show(answers.get((i, "vector"), (0,))[0]), " | ".join(expected),
                " | ".join(paths[:3]) or "(nothing)"))
    if evidence:
        print_vector_evidence(questions, answers, evidence)
    if args.csv:
        write_csv(args.csv, table, git_commit(bin_dir), args.label or bin_dir)
        print("\nappended %d rows to %s" % (len(table), args.csv))


def main():
    args = parse_args()
    bin_dir = os.path.abspath(os.environ.get("FOLIO_BIN_DIR", os.path.join(ROOT, "build/bin")))
    questions = read_questions(args.questions)
    if args.vault:
        questions = [q for q in questions if q[0] in args.vault]
        if not questions:
            sys.exit("no questions for vault(s) %s" % ", ".join(args.vault))
    # SIGTERM and SIGHUP end the run as Ctrl-C does: through the finally that stops the children.
    signal.signal(signal.SIGINT, signal.default_int_handler)  # also when started with SIGINT ignored (cmd &)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        vaults, modes, answers, evidence = run(args, questions, bin_dir)
    except KeyboardInterrupt:
        sys.exit("interrupted; every process started was stopped")
    except RuntimeError as e:
        sys.exit("search-eval: %s" % e)
    report(args, questions, vaults, modes, answers, bin_dir, evidence)


if __name__ == "__main__":
    sys.dont_write_bytecode = True
    main()
