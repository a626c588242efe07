#!/usr/bin/env python3
"""Checks that Prometheus on Kubernetes gives folio's series the labels the
alert rules and the dashboard select (issue 24), with the pods deploy/k8s
really renders (kubectl kustomize), not hand-made samples:

- deploy/prometheus/prometheus-k8s.yml passes `promtool check config` with
  its two rule files. Debian's promtool is built without Kubernetes service
  discovery ("field kubernetes_sd_configs not found"): there the same file
  is checked with the kubernetes_sd_configs block replaced by a static
  target, so the relabel rules, regexes and rule files are still checked by
  promtool itself;
- its relabel_configs, applied to every pod template of the rendered
  deploy/k8s (as Kubernetes service discovery labels a running pod), yield
  exactly the jobs edge, ingest, search and storage, each with namespace,
  pod and instance <pod IP>:9090 and the /metrics path; pods without the
  scrape annotation (nats) and Pending pods are dropped;
- the job names alerts.yml and the dashboard select are among those jobs;
- deploy/k8s/monitoring renders to a PodMonitor whose selector picks the
  same workloads, on a port they all declare, and whose relabelings give
  the same job names, and to a PrometheusRule that is exactly
  make-prometheusrule.py's output (every alert of alerts.yml and
  alerts-kubernetes.yml, so the Operator's rules cannot drift from the
  ones promtool tests).
Relabeling is evaluated here the way Prometheus does it (anchored RE2
regexes, which the ones used are also in Python; source labels joined with
";"; replace with $1; keep; drop), since promtool has no relabel tester.
Exits 1 naming every failure."""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

SRC = os.environ.get("FOLIO_SOURCE_DIR") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PROM = os.path.join(SRC, "deploy", "prometheus")
K8S = os.path.join(SRC, "deploy", "k8s")
FOLIO_JOBS = {"edge", "ingest", "search", "storage"}

failures = []


def fail(msg):
    failures.append(msg)


def meta_name(label):
    """A pod label or annotation name as Kubernetes SD spells it."""
    return re.sub(r"[^a-zA-Z0-9_]", "_", label)


def relabel(labels, rules):
    """Prometheus' relabeling of a target's labels; None if dropped.
    `rules` are relabel_configs (snake_case keys)."""
    labels = dict(labels)
    for r in rules:
        action = r.get("action", "replace")
        sep = r.get("separator", ";")
        value = sep.join(labels.get(s, "") for s in r.get("source_labels", []))
        regex = re.compile("^(?:" + str(r.get("regex", "(.*)")) + ")$")
        m = regex.match(value)
        if action == "keep":
            if not m:
                return None
        elif action == "drop":
            if m:
                return None
        elif action == "replace":
            if not m:
                continue
            repl = re.sub(r"\$\{?(\d+)\}?", r"\\g<\1>", str(r.get("replacement", "$1")))
            out = m.expand(repl)
            if out:
                labels[r["target_label"]] = out
            else:
                labels.pop(r["target_label"], None)
        else:
            fail(f"relabel action {action} not evaluated by this check")
    return labels


def finish(labels):
    """What Prometheus keeps after relabeling: instance defaults to the
    address, __* labels go."""
    out = {k: v for k, v in labels.items() if not k.startswith("__")}
    out.setdefault("instance", labels.get("__address__", ""))
    return out


def pod_meta(obj, ordinal, phase="Running"):
    """Kubernetes SD's labels of a pod of workload `obj` (role pod; one
    target per declared container port, as SD does)."""
    tpl = obj["spec"]["template"]
    md = tpl.get("metadata", {})
    name = obj["metadata"]["name"] + (f"-{ordinal}" if obj["kind"] == "StatefulSet" else f"-5c8f9d7b6-x{ordinal}")
    base = {
        "__meta_kubernetes_namespace": obj["metadata"].get("namespace", "default"),
        "__meta_kubernetes_pod_name": name,
        "__meta_kubernetes_pod_ip": f"10.1.0.{10 + ordinal}",
        "__meta_kubernetes_pod_phase": phase,
    }
    for k, v in md.get("labels", {}).items():
        base["__meta_kubernetes_pod_label_" + meta_name(k)] = str(v)
        base["__meta_kubernetes_pod_labelpresent_" + meta_name(k)] = "true"
    for k, v in md.get("annotations", {}).items():
        base["__meta_kubernetes_pod_annotation_" + meta_name(k)] = str(v)
    targets = []
    for c in tpl["spec"].get("containers", []):
        for p in c.get("ports", []) or [{}]:
            t = dict(base)
            t["__meta_kubernetes_pod_container_name"] = c["name"]
            if p:
                t["__meta_kubernetes_pod_container_port_name"] = p.get("name", "")
                t["__meta_kubernetes_pod_container_port_number"] = str(p["containerPort"])
                t["__address__"] = f"{base['__meta_kubernetes_pod_ip']}:{p['containerPort']}"
            else:
                t["__address__"] = base["__meta_kubernetes_pod_ip"]
            targets.append(t)
    return targets


def kustomize(path):
    r = subprocess.run(["kubectl", "kustomize", path], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"kubectl kustomize {path}: {r.stderr.strip()}")
        return []
    return [d for d in yaml.safe_load_all(r.stdout) if d]


def check_promtool_config():
    if shutil.which("promtool") is None:
        print("prometheus_k8s_check: promtool not installed (Debian package prometheus): config check skipped")
        return
    path = os.path.join(PROM, "prometheus-k8s.yml")
    r = subprocess.run(["promtool", "check", "config", path], capture_output=True, text=True)
    out = r.stdout + r.stderr
    if r.returncode != 0 and "kubernetes_sd_configs not found" in out:
        cfg = yaml.safe_load(open(path))
        for sc in cfg["scrape_configs"]:
            if "kubernetes_sd_configs" in sc:
                del sc["kubernetes_sd_configs"]
                sc["static_configs"] = [{"targets": ["10.1.0.10:9090"]}]
        cfg["rule_files"] = [os.path.join(PROM, f) for f in cfg["rule_files"]]
        with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as f:
            yaml.safe_dump(cfg, f)
            tmp = f.name
        r = subprocess.run(["promtool", "check", "config", tmp], capture_output=True, text=True)
        out = r.stdout + r.stderr
        os.unlink(tmp)
    if r.returncode != 0:
        fail(f"promtool check config prometheus-k8s.yml: {out.strip()}")
    if "2 rule files found" not in out:
        fail(f"prometheus-k8s.yml should load alerts.yml and alerts-kubernetes.yml: {out.strip()}")


def selected_jobs():
    """Job names the rules and the dashboard select: job="x", job=~"a|b"."""
    texts = [open(os.path.join(PROM, "alerts.yml")).read()]
    texts += [open(p).read() for p in glob.glob(os.path.join(SRC, "deploy", "grafana", "dashboards", "*.json"))]
    jobs = set()
    for t in texts:
        for m in re.finditer(r'job\s*(=~?)\s*\\?"([^"\\]+)\\?"', t):
            if m.group(1) == "=":
                jobs.add(m.group(2))
            else:
                jobs.update(j for j in m.group(2).split("|") if re.fullmatch(r"[a-z]+", j))
    return jobs


def scrape(rules, workloads, port_filter=None):
    """The series labels a scrape config's relabeling gives each workload's
    running pods: {workload name: [labels]}."""
    got = {}
    for obj in workloads:
        for ordinal in (0, 1):
            for t in pod_meta(obj, ordinal):
                if port_filter and not port_filter(t):
                    continue
                out = relabel(t, rules)
                if out is not None:
                    got.setdefault(obj["metadata"]["name"], []).append((t, finish(out)))
    return got


def check_scrape_config(workloads):
    cfg = yaml.safe_load(open(os.path.join(PROM, "prometheus-k8s.yml")))
    sc = next((s for s in cfg["scrape_configs"] if "kubernetes_sd_configs" in s), None)
    if sc is None:
        fail("prometheus-k8s.yml has no kubernetes_sd_configs scrape config")
        return set()
    if sc["kubernetes_sd_configs"][0].get("role") != "pod":
        fail("prometheus-k8s.yml: kubernetes_sd_configs role should be pod")
    rules = sc.get("relabel_configs", [])
    got = scrape(rules, workloads)
    jobs = set()
    for name, series in got.items():
        pods = {s[1]["pod"] for s in series if "pod" in s[1]}
        if len(series) != len(pods) or len(pods) != 2:
            fail(f"{name}: want one target per pod (2 pods), got {[s[1] for s in series]}")
        for meta, labels in series:
            jobs.add(labels.get("job"))
            want_instance = meta["__meta_kubernetes_pod_ip"] + ":9090"
            if labels.get("instance") != want_instance:
                fail(f"{name}: instance {labels.get('instance')}, want {want_instance}")
            if labels.get("namespace") != meta["__meta_kubernetes_namespace"]:
                fail(f"{name}: namespace label {labels.get('namespace')}")
            if labels.get("pod") != meta["__meta_kubernetes_pod_name"]:
                fail(f"{name}: pod label {labels.get('pod')}")
            addr = relabel(meta, rules)
            if addr.get("__metrics_path__") != "/metrics" or addr.get("__address__") != want_instance:
                fail(f"{name}: scraped at {addr.get('__address__')}{addr.get('__metrics_path__')}")
    if jobs != FOLIO_JOBS:
        fail(f"prometheus-k8s.yml relabeling yields jobs {sorted(map(str, jobs))}, want {sorted(FOLIO_JOBS)}")
    if "nats" in got:
        fail("nats has no scrape annotation (its 8222 speaks JSON), yet it is scraped")
    # A Pending pod (no container running, maybe no IP) is not a target.
    edge = next(o for o in workloads if o["metadata"]["name"] == "edge")
    if any(relabel(t, rules) is not None for t in pod_meta(edge, 0, phase="Pending")):
        fail("a Pending pod is scraped")
    return jobs


def check_podmonitor(workloads):
    docs = kustomize(os.path.join(K8S, "monitoring"))
    pms = [d for d in docs if d.get("kind") == "PodMonitor"]
    if len(pms) != 1:
        fail(f"deploy/k8s/monitoring should render one PodMonitor, got {len(pms)}")
        return
    pm = pms[0]
    if pm.get("apiVersion") != "monitoring.coreos.com/v1":
        fail(f"PodMonitor apiVersion {pm.get('apiVersion')}")
    spec = pm["spec"]
    names = set()
    for e in spec["selector"].get("matchExpressions", []):
        if e["key"] == "app.kubernetes.io/name" and e["operator"] == "In":
            names.update(e["values"])
    want = {o["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/name"] for o in workloads
            if o["spec"]["template"]["metadata"].get("annotations", {}).get("prometheus.io/scrape") == "true"}
    if names != want:
        fail(f"PodMonitor selects {sorted(names)}, the scraped workloads are {sorted(want)}")
    selected = [o for o in workloads if o["spec"]["template"]["metadata"]["labels"].get("app.kubernetes.io/name") in names]
    for ep in spec["podMetricsEndpoints"]:
        port = ep.get("port")
        rules = [{re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), k): v for k, v in r.items()}
                 for r in ep.get("relabelings", [])]
        # The Operator sets job from jobLabel first; the relabelings follow.
        job_label = "__meta_kubernetes_pod_label_" + meta_name(spec.get("jobLabel", ""))
        rules = [{"source_labels": [job_label], "target_label": "job"}] + rules
        for o in selected:
            ports = {p.get("name") for c in o["spec"]["template"]["spec"]["containers"] for p in c.get("ports", [])}
            if port not in ports:
                fail(f"PodMonitor port {port} is not declared by {o['metadata']['name']}")
        got = scrape(rules, selected, lambda t: t.get("__meta_kubernetes_pod_container_port_name") == port)
        jobs = {labels.get("job") for series in got.values() for _, labels in series}
        if jobs != FOLIO_JOBS:
            fail(f"PodMonitor relabelings yield jobs {sorted(map(str, jobs))}, want {sorted(FOLIO_JOBS)}")
        if ep.get("path", "/metrics") != "/metrics":
            fail(f"PodMonitor path {ep.get('path')}")


def check_prometheusrule():
    """prometheusrule.yaml is make-prometheusrule.py's output (so it carries
    exactly the rules promtool tests), and deploy/k8s/monitoring renders it."""
    gen = os.path.join(K8S, "monitoring", "make-prometheusrule.py")
    r = subprocess.run([sys.executable, gen], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"make-prometheusrule.py: {r.stderr.strip()}")
        return
    with open(os.path.join(K8S, "monitoring", "prometheusrule.yaml")) as f:
        if f.read() != r.stdout:
            fail("deploy/k8s/monitoring/prometheusrule.yaml is not what make-prometheusrule.py makes of"
                 " deploy/prometheus's rules: regenerate it (see the script)")
    rules = [d for d in kustomize(os.path.join(K8S, "monitoring")) if d.get("kind") == "PrometheusRule"]
    if len(rules) != 1:
        fail(f"deploy/k8s/monitoring should render one PrometheusRule, got {len(rules)}")
        return
    alerts = {r.get("alert") for g in rules[0]["spec"]["groups"] for r in g["rules"]} - {None}
    want = set()
    for name in ("alerts.yml", "alerts-kubernetes.yml"):
        with open(os.path.join(PROM, name)) as f:
            want |= {r.get("alert") for g in yaml.safe_load(f)["groups"] for r in g["rules"]} - {None}
    if alerts != want:
        fail(f"the PrometheusRule's alerts differ from deploy/prometheus's: {sorted(alerts ^ want)}")


def main():
    if shutil.which("kubectl") is None:
        print("prometheus_k8s_check: kubectl not installed: skipped")
        return 77
    check_promtool_config()
    workloads = [d for d in kustomize(K8S) if d.get("kind") in ("Deployment", "StatefulSet")]
    if not workloads:
        fail("deploy/k8s renders no workloads")
    jobs = check_scrape_config(workloads)
    check_podmonitor(workloads)
    check_prometheusrule()
    missing = selected_jobs() - jobs
    if missing:
        fail(f"the rules or the dashboard select job(s) {sorted(missing)} that no Kubernetes pod gets")
    for f in failures:
        print("FAIL:", f)
    if failures:
        return 1
    print(f"prometheus_k8s_check: jobs {sorted(jobs)} from {len(workloads)} workloads; PodMonitor agrees: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
