#!/usr/bin/env python3
"""Keeps the sizing from going stale: loadtest/sizing.py turns the benchmark
results into memory, CPU and disk per container and total notes; this checks
that

- the table between `<!-- sizing: python3 loadtest/sizing.py -->` and
  `<!-- /sizing -->` in README.md and deploy/k8s/README.md is its output;
- deploy/k8s/sizing.yaml is its `--patch N`, N read from the file's header
  (100,000 as shipped: resizing is regenerating it for another N);
- the rendered overlays carry its resources: deploy/k8s those for N notes,
  overlays/single (base/) those for 10,000 (kubectl kustomize).

Exits 1 naming every difference; regenerate with the commands it prints."""
import json
import os
import re
import shutil
import subprocess
import sys

import yaml

SRC = os.environ.get("FOLIO_SOURCE_DIR") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
GEN = os.path.join(SRC, "loadtest", "sizing.py")
OVERLAYS = {"deploy/k8s/overlays/single": 10000}  # deploy/k8s: N of its sizing.yaml
MARK = re.compile(r"<!-- sizing: python3 loadtest/sizing\.py -->\n(.*?)\n<!-- /sizing -->", re.S)

failures = []


def gen(*args):
    return subprocess.run([sys.executable, GEN, *args], capture_output=True, text=True, check=True).stdout


def main():
    table = gen().rstrip("\n")
    for doc in ("README.md", "deploy/k8s/README.md"):
        blocks = MARK.findall(open(os.path.join(SRC, doc)).read())
        if len(blocks) != 1:
            failures.append(f"{doc}: expected one sizing block between the markers, found {len(blocks)}")
        elif blocks[0] != table:
            failures.append(f"{doc}: the sizing table differs from `python3 loadtest/sizing.py`; paste its output")
    patch = os.path.join(SRC, "deploy", "k8s", "sizing.yaml")
    text = open(patch).read() if os.path.exists(patch) else ""
    n = re.search(r"^#\s+python3 loadtest/sizing\.py --patch (\d+)$", text, re.M)
    if not n:
        failures.append("deploy/k8s/sizing.yaml: no `python3 loadtest/sizing.py --patch N` header")
    elif text != gen("--patch", n.group(1)):
        failures.append(f"deploy/k8s/sizing.yaml differs from `python3 loadtest/sizing.py --patch {n.group(1)}`")
    else:
        OVERLAYS["deploy/k8s"] = int(n.group(1))
    if not shutil.which("kubectl"):
        print("sizing_check: kubectl not found (scripts/install-deps.sh installs kubernetes-client)", file=sys.stderr)
        return 1
    sys.path.insert(0, os.path.dirname(GEN))
    import sizing  # noqa: E402
    for path, notes in OVERLAYS.items():
        want = json.loads(gen("--json", str(notes)))["memory"]
        p = subprocess.run(["kubectl", "kustomize", os.path.join(SRC, path)], capture_output=True, text=True)
        if p.returncode != 0:
            failures.append(f"kubectl kustomize {path}: {p.stderr.strip()}")
            continue
        objs = {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(p.stdout) if d}
        for svc, (kind, name, container) in sizing.WORKLOADS.items():
            d = objs.get((kind, name))
            c = next((c for c in (d or {}).get("spec", {}).get("template", {}).get("spec", {}).get("containers", [])
                      if c["name"] == container), None)
            if c is None:
                failures.append(f"{path}: no {kind}/{name} container {container}")
                continue
            res = c.get("resources") or {}
            got = {"request": (res.get("requests") or {}).get("memory"), "limit": (res.get("limits") or {}).get("memory"),
                   "cpu": ((res.get("requests") or {}).get("cpu"), str((res.get("limits") or {}).get("cpu")))}
            exp = {"request": want[svc]["request"], "limit": want[svc]["limit"], "cpu": sizing.CPU[svc]}
            if got != exp:
                failures.append(f"{path} {kind}/{name}: resources {got}, sizing.py for {notes:,} notes says {exp}")
    if failures:
        print("\n".join(failures), file=sys.stderr)
        print("sizing_check: regenerate: python3 loadtest/sizing.py (README tables), "
              "python3 loadtest/sizing.py --patch N > deploy/k8s/sizing.yaml, "
              "base/ resources from --json 10000", file=sys.stderr)
        return 1
    print(f"sizing_check: READMEs, sizing.yaml and {len(OVERLAYS)} overlays match loadtest/sizing.py")
    return 0


if __name__ == "__main__":
    sys.exit(main())
