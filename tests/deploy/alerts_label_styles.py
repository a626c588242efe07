#!/usr/bin/env python3
"""Every alert of deploy/prometheus/alerts.yml, tested in both label styles.

deploy/prometheus/alerts_test.yml writes each test group in one style:
docker-compose labels (job, instance "ingest:8080") or Kubernetes ones, as
prometheus-k8s.yml's relabeling makes them (the same job, plus namespace and
pod). This check makes the other style of every group and runs
`promtool test rules` on it, so each alert fires (and stays silent) with
both:
  - compose -> Kubernetes: every series with a job gets namespace="folio"
    and pod="<job>-<n>" (one pod per job and instance); an expected alert
    gets them too when the rule keeps them (it has no `by (...)` that drops
    them, and is no absent());
  - Kubernetes -> compose: namespace and pod are dropped from the series and
    from the expected alerts.
The annotations expected are unchanged (they name job and instance, which
both styles share). Exits 1 naming the failures; 77 (skipped) without
promtool.
"""
import copy
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

SRC = os.environ.get("FOLIO_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
PROM = os.path.join(SRC, "deploy", "prometheus")
K8S_LABELS = ("namespace", "pod")

SERIES = re.compile(r"^\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(?:\{(.*)\})?\s*$")
LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?')


def parse_series(text):
    m = SERIES.match(text)
    if not m:
        raise ValueError(f"cannot parse series {text!r}")
    labels, rest = [], m.group(2) or ""
    pos = 0
    while pos < len(rest):
        lm = LABEL.match(rest, pos)
        if not lm:
            raise ValueError(f"cannot parse labels of {text!r}")
        labels.append((lm.group(1), lm.group(2)))
        pos = lm.end()
    return m.group(1), labels


def format_series(name, labels):
    return name + "{" + ", ".join(f'{k}="{v}"' for k, v in labels) + "}"


def keeps_k8s_labels(expr):
    """Whether the alerts of `expr` carry its series' namespace and pod."""
    flat = " ".join(expr.split())
    if "absent(" in flat:
        return set()
    m = re.search(r"\bby\s*\(([^)]*)\)", flat)
    if m:
        return {l.strip() for l in m.group(1).split(",")} & set(K8S_LABELS)
    return set(K8S_LABELS)


def is_k8s_group(group):
    for s in group.get("input_series", []):
        _, labels = parse_series(s["series"])
        if any(k in K8S_LABELS for k, _ in labels):
            return True
    return False


def to_k8s(group, kept):
    pods = {}
    for s in group.get("input_series", []):
        name, labels = parse_series(s["series"])
        d = dict(labels)
        if "job" in d:
            key = (d["job"], d.get("instance", ""))
            pods.setdefault(key, f"{d['job']}-{sum(1 for k in pods if k[0] == d['job'])}")
            labels = labels + [("namespace", "folio"), ("pod", pods[key])]
        s["series"] = format_series(name, labels)
    for t in group.get("alert_rule_test", []):
        for a in t.get("exp_alerts") or []:
            el = a["exp_labels"]
            keep = kept.get(t["alertname"], set(K8S_LABELS))
            if "namespace" in keep:
                el["namespace"] = "folio"
            if "pod" in keep and "job" in el:
                pod = pods.get((el["job"], el.get("instance", "")))
                if pod is not None:
                    el["pod"] = pod
    return group


def to_compose(group):
    seen = set()
    for s in group.get("input_series", []):
        name, labels = parse_series(s["series"])
        labels = [(k, v) for k, v in labels if k not in K8S_LABELS]
        text = format_series(name, labels)
        if text in seen:
            return None  # two pods with one instance: no compose equivalent
        seen.add(text)
        s["series"] = text
    for t in group.get("alert_rule_test", []):
        for a in t.get("exp_alerts") or []:
            for k in K8S_LABELS:
                a["exp_labels"].pop(k, None)
    return group


def main():
    if shutil.which("promtool") is None:
        print("alerts_label_styles: promtool not installed (Debian package prometheus): skipped")
        return 77
    rules = yaml.safe_load(open(os.path.join(PROM, "alerts.yml")))
    kept = {}
    for g in rules["groups"]:
        for r in g["rules"]:
            if "alert" in r:
                kept[r["alert"]] = keeps_k8s_labels(r["expr"])
    tests = yaml.safe_load(open(os.path.join(PROM, "alerts_test.yml")))
    styles = {a: set() for a in kept}
    out = copy.deepcopy(tests)
    out["rule_files"] = [os.path.join(PROM, f) for f in tests["rule_files"]]
    out["tests"] = []
    for group in tests["tests"]:
        k8s = is_k8s_group(group)
        other = to_compose(copy.deepcopy(group)) if k8s else to_k8s(copy.deepcopy(group), kept)
        for t in group.get("alert_rule_test", []):
            styles.setdefault(t["alertname"], set()).add("kubernetes" if k8s else "compose")
            if other is not None:
                styles[t["alertname"]].add("compose" if k8s else "kubernetes")
        if other is not None:
            out["tests"].append(other)
    failures = [f"{a}: tested only with {', '.join(sorted(s)) or 'no'} labels" for a, s in styles.items()
                if s != {"compose", "kubernetes"} and a in kept]
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "alerts_other_style_test.yml")
        with open(path, "w") as f:
            yaml.safe_dump(out, f, sort_keys=False, width=1000)
        r = subprocess.run(["promtool", "test", "rules", path], capture_output=True, text=True)
        if r.returncode != 0:
            failures.append("promtool test rules on the other label style:\n" + r.stdout + r.stderr)
    for f in failures:
        print(f"alerts_label_styles: {f}")
    if failures:
        return 1
    print(f"alerts_label_styles: {len(out['tests'])} test groups also pass in the other label style; "
          f"{len(kept)} alerts tested with both")
    return 0


if __name__ == "__main__":
    sys.exit(main())
