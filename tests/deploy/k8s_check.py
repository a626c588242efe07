#!/usr/bin/env python3
"""Checks deploy/k8s: renders every kustomization with kubectl (the one on
PATH, plus each binary named in FOLIO_KUBECTLS, colon-separated, e.g. Debian's
kubectl 1.20 with its kustomize v2.0.3) and asserts what an operator relies
on, object by object:

- every object has apiVersion, kind and metadata.name; namespaced objects of
  an overlay share one namespace;
- every workload container names an image that went through the overlay's
  `images:` mapping (a tag or digest), has liveness and readiness probes (folio:
  /livez and /readyz; NATS: /healthz) on a port it declares, and requests and
  limits for CPU and memory; runs as non-root, without privilege escalation,
  on a read-only root filesystem; folio pods stay longer than the preStop
  sleep plus the services' 10 s drain, and carry Prometheus scrape
  annotations naming a declared port;
- folio containers' FOLIO_* variables are flags of the service (its --help);
- StatefulSets have volumeClaimTemplates and a governing Service; every volume
  mount resolves; every Deployment has an HPA (minReplicas >= 2) and a PDB;
- every ConfigMap and Secret reference resolves (the Secret folio-tokens is
  made by deploy/k8s/make-secrets.sh: its keys are read from there);
- every Service selects existing pods on ports they declare; every Ingress
  backend is an existing Service port;
- the NATS topology agrees: FOLIO_NATS lists nats-0..N-1 of the StatefulSet's
  N replicas, FOLIO_NATS_REPLICAS <= N, nats.conf routes to the same N nodes
  (no cluster block for one), with mutual TLS on the routes, includes the
  ConfigMap nats-permissions (deploy/nats/permissions.conf) and passes
  `nats-server -t` with it;
- make-secrets.sh's Secrets: folio-tokens and nats-routes-tls.
Exits 1 naming every failure."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

SRC = os.environ.get("FOLIO_SOURCE_DIR") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("FOLIO_BIN_DIR", "")
K8S = os.path.join(SRC, "deploy", "k8s")
DRAIN_SECONDS = 10  # the services' SIGTERM drain bound (README)
WORKLOADS = {"Deployment", "StatefulSet", "DaemonSet"}
CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding", "PersistentVolume", "StorageClass",
                  "IngressClass", "CustomResourceDefinition", "PriorityClass"}

failures = []


def fail(where, msg):
    failures.append(f"{where}: {msg}")


def external_secrets():
    """Secrets the operator creates: {name: set(keys)}, from make-secrets.sh
    (SECRET=/KEYS=(...) and TLS_SECRET=/TLS_KEYS=(...))."""
    text = open(os.path.join(K8S, "make-secrets.sh")).read()
    out = {}
    for prefix in ("", "TLS_"):
        name = re.search(rf"^{prefix}SECRET=(\S+)$", text, re.M)
        keys = re.search(rf"^{prefix}KEYS=\((.*)\)$", text, re.M)
        if not name or not keys:
            fail("make-secrets.sh", f"no {prefix}SECRET=... and {prefix}KEYS=(...) lines to read a Secret's name and keys from")
            continue
        out[name.group(1)] = set(keys.group(1).split())
    return out


def render(kubectl, path):
    p = subprocess.run([kubectl, "kustomize", path], capture_output=True, text=True)
    if p.returncode != 0:
        fail(f"{kubectl} kustomize {os.path.relpath(path, SRC)}", p.stderr.strip() or f"exit {p.returncode}")
        return None
    try:
        return [d for d in yaml.safe_load_all(p.stdout) if d is not None]
    except yaml.YAMLError as e:
        fail(f"{kubectl} kustomize {os.path.relpath(path, SRC)}", f"output does not parse: {e}")
        return None


def service_flags(image):
    """FOLIO_* names the service of a folio image accepts, or None if unknown."""
    m = re.search(r"folio[-/](ingest|edge|search|storage)\b", image)
    if not m or not BIN:
        return None
    exe = os.path.join(BIN, "folio-" + m.group(1))
    if not os.access(exe, os.X_OK):
        return None
    out = subprocess.run([exe, "--help"], capture_output=True, text=True).stdout
    return set(re.findall(r"env (FOLIO_[A-Z0-9_]+)", out))


def labels_match(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def port_declared(port, containers):
    for c in containers:
        for p in c.get("ports", []):
            if port in (p.get("name"), p.get("containerPort")):
                return True
    return False


def prestop_sleep(c):
    cmd = (((c.get("lifecycle") or {}).get("preStop") or {}).get("exec") or {}).get("command") or []
    if len(cmd) == 2 and cmd[0] in ("sleep", "/bin/sleep") and cmd[1].isdigit():
        return int(cmd[1])
    return 0


def check_container(where, c, pod, is_folio, flag_cache):
    cw = f"{where} container {c.get('name')}"
    image = c.get("image", "")
    if not image:
        fail(cw, "names no image")
    elif "@" not in image and ":" not in image.rsplit("/", 1)[-1]:
        fail(cw, f"image {image!r} has no tag: not mapped by the overlay's images:")
    containers = pod.get("containers", [])
    for kind, path in (("livenessProbe", "/livez"), ("readinessProbe", "/readyz")):
        probe = c.get(kind)
        if not probe:
            fail(cw, f"has no {kind}")
            continue
        get = probe.get("httpGet") or {}
        want = path if is_folio else "/healthz"
        if not str(get.get("path", "")).startswith(want):
            fail(cw, f"{kind} is not an HTTP GET of {want} (got {get.get('path')!r})")
        if get.get("port") is None or not port_declared(get.get("port"), containers):
            fail(cw, f"{kind} port {get.get('port')!r} is not a port the container declares")
    res = c.get("resources") or {}
    for part in ("requests", "limits"):
        for r in ("cpu", "memory"):
            if not (res.get(part) or {}).get(r):
                fail(cw, f"has no resources.{part}.{r}")
    sc = c.get("securityContext") or {}
    psc = pod.get("securityContext") or {}
    if not (sc.get("runAsNonRoot") or psc.get("runAsNonRoot")):
        fail(cw, "does not set runAsNonRoot")
    if sc.get("allowPrivilegeEscalation") is not False:
        fail(cw, "does not set allowPrivilegeEscalation: false")
    if sc.get("readOnlyRootFilesystem") is not True:
        fail(cw, "does not set readOnlyRootFilesystem: true")
    if is_folio:
        grace = pod.get("terminationGracePeriodSeconds", 30)
        if grace <= prestop_sleep(c) + DRAIN_SECONDS:
            fail(cw, f"terminationGracePeriodSeconds {grace} <= preStop sleep + the {DRAIN_SECONDS} s drain")
        flags = flag_cache.setdefault(image, service_flags(image))
        for e in c.get("env", []):
            if e["name"].startswith("FOLIO_") and flags is not None and e["name"] not in flags:
                fail(cw, f"{e['name']} is no flag of the service (see its --help)")


def check_overlay(label, docs, secrets_ext, flag_cache):
    by_kind = {}
    for i, d in enumerate(docs):
        meta = d.get("metadata") or {}
        if not d.get("apiVersion") or not d.get("kind") or not meta.get("name"):
            fail(f"{label} object #{i}", "lacks apiVersion, kind or metadata.name")
            continue
        by_kind.setdefault(d["kind"], {})[meta["name"]] = d
    where = lambda d: f"{label} {d['kind']}/{d['metadata']['name']}"
    namespaces = {d["metadata"].get("namespace") for d in docs
                  if d.get("kind") not in CLUSTER_SCOPED and d.get("metadata")}
    if len(namespaces) != 1 or None in namespaces:
        fail(label, f"namespaced objects are not all in one namespace: {sorted(map(str, namespaces))}")
    elif namespaces.pop() not in by_kind.get("Namespace", {}):
        fail(label, "the objects' namespace is not created by the overlay")

    configmaps = by_kind.get("ConfigMap", {})
    secrets = {n: set((d.get("data") or {}).keys()) | set((d.get("stringData") or {}).keys())
               for n, d in by_kind.get("Secret", {}).items()}
    secrets.update(secrets_ext)
    services = by_kind.get("Service", {})

    def need_configmap(w, name, key=None):
        if name not in configmaps:
            fail(w, f"ConfigMap {name!r} does not exist")
        elif key is not None and key not in (configmaps[name].get("data") or {}):
            fail(w, f"ConfigMap {name!r} has no key {key!r}")

    def need_secret(w, name, key=None):
        if name not in secrets:
            fail(w, f"Secret {name!r} is neither rendered nor made by make-secrets.sh")
        elif key is not None and key not in secrets[name]:
            fail(w, f"Secret {name!r} has no key {key!r}")

    pods = []  # (workload, pod template)
    for kind in WORKLOADS:
        for name, d in by_kind.get(kind, {}).items():
            w = where(d)
            tmpl = d["spec"]["template"]
            pod = tmpl["spec"]
            pods.append((d, tmpl))
            if not labels_match((d["spec"].get("selector") or {}).get("matchLabels"),
                                tmpl["metadata"].get("labels", {})):
                fail(w, "its selector does not match its pod template")
            images = " ".join(c.get("image", "") for c in pod.get("containers", []))
            is_folio = "folio" in images
            if is_folio:
                ann = tmpl["metadata"].get("annotations") or {}
                if ann.get("prometheus.io/scrape") != "true" or ann.get("prometheus.io/path") != "/metrics":
                    fail(w, "pods lack prometheus.io/scrape: \"true\" and prometheus.io/path: /metrics")
                port = ann.get("prometheus.io/port", "")
                if not port.isdigit() or not port_declared(int(port), pod.get("containers", [])):
                    fail(w, f"prometheus.io/port {port!r} is not a declared container port")
            vols = {v["name"]: v for v in pod.get("volumes", [])}
            vcts = {v["metadata"]["name"] for v in d["spec"].get("volumeClaimTemplates", [])}
            for v in vols.values():
                if "configMap" in v:
                    need_configmap(w, v["configMap"]["name"])
                    for it in v["configMap"].get("items", []):
                        need_configmap(w, v["configMap"]["name"], it["key"])
                if "secret" in v:
                    need_secret(w, v["secret"]["secretName"])
                    for it in v["secret"].get("items", []):
                        need_secret(w, v["secret"]["secretName"], it["key"])
            for c in pod.get("containers", []) + pod.get("initContainers", []):
                check_container(w, c, pod, is_folio, flag_cache)
                for m in c.get("volumeMounts", []):
                    if m["name"] not in vols and m["name"] not in vcts:
                        fail(w, f"volumeMount {m['name']!r} names no volume or claim template")
                for e in c.get("envFrom", []):
                    if "configMapRef" in e:
                        need_configmap(w, e["configMapRef"]["name"])
                    if "secretRef" in e:
                        need_secret(w, e["secretRef"]["name"])
                for e in c.get("env", []):
                    ref = e.get("valueFrom") or {}
                    if "configMapKeyRef" in ref:
                        need_configmap(w, ref["configMapKeyRef"]["name"], ref["configMapKeyRef"]["key"])
                    if "secretKeyRef" in ref:
                        need_secret(w, ref["secretKeyRef"]["name"], ref["secretKeyRef"]["key"])
            if kind == "StatefulSet":
                if not vcts:
                    fail(w, "has no volumeClaimTemplates")
                if d["spec"].get("serviceName") not in services:
                    fail(w, f"serviceName {d['spec'].get('serviceName')!r} is no Service")

    hpas = by_kind.get("HorizontalPodAutoscaler", {}).values()
    pdbs = by_kind.get("PodDisruptionBudget", {}).values()
    for name, d in by_kind.get("Deployment", {}).items():
        w = where(d)
        mine = [h for h in hpas if h["spec"]["scaleTargetRef"].get("kind") == "Deployment"
                and h["spec"]["scaleTargetRef"].get("name") == name]
        if not mine:
            fail(w, "has no HorizontalPodAutoscaler")
        for h in mine:
            if h["spec"].get("minReplicas", 1) < 2:
                fail(w, "its HPA's minReplicas is below 2")
            if not any(m.get("type") == "Resource" and m["resource"]["name"] == "cpu"
                       for m in h["spec"].get("metrics", [])):
                fail(w, "its HPA does not scale on CPU")
        if not any(labels_match((p["spec"].get("selector") or {}).get("matchLabels"),
                                d["spec"]["template"]["metadata"].get("labels", {})) for p in pdbs):
            fail(w, "has no PodDisruptionBudget selecting its pods")

    for name, s in services.items():
        w = where(s)
        sel = s["spec"].get("selector")
        matched = [t for _, t in pods if labels_match(sel, t["metadata"].get("labels", {}))]
        if not matched:
            fail(w, f"selector {sel} selects no pods")
            continue
        for p in s["spec"].get("ports", []):
            tp = p.get("targetPort", p.get("port"))
            if not all(port_declared(tp, t["spec"].get("containers", [])) for t in matched):
                fail(w, f"targetPort {tp!r} is not declared by the pods it selects")
    for name, ing in by_kind.get("Ingress", {}).items():
        for rule in ing["spec"].get("rules", []):
            for p in (rule.get("http") or {}).get("paths", []):
                svc = p["backend"]["service"]
                s = services.get(svc["name"])
                if s is None:
                    fail(where(ing), f"backend Service {svc['name']!r} does not exist")
                    continue
                port = svc["port"].get("name") or svc["port"].get("number")
                if not any(port in (sp.get("name"), sp.get("port")) for sp in s["spec"]["ports"]):
                    fail(where(ing), f"Service {svc['name']!r} has no port {port!r}")

    check_nats(label, by_kind)


def check_nats(label, by_kind):
    nats = by_kind.get("StatefulSet", {}).get("nats")
    if nats is None:
        fail(label, "no StatefulSet nats")
        return
    n = nats["spec"].get("replicas", 1)
    env = {}
    for c in (by_kind.get("ConfigMap") or {}).values():
        if c["metadata"]["name"].startswith("folio-env"):
            env = c.get("data") or {}
    want = ",".join(f"nats://nats-{i}.nats:4222" for i in range(n))
    if env.get("FOLIO_NATS") != want:
        fail(label, f"FOLIO_NATS is {env.get('FOLIO_NATS')!r}; with {n} NATS replicas it should be {want!r}")
    replicas = int(env.get("FOLIO_NATS_REPLICAS", "1"))
    if not 1 <= replicas <= n:
        fail(label, f"FOLIO_NATS_REPLICAS {replicas} needs 1..{n} NATS nodes")
    if n >= 3 and replicas < 3:
        fail(label, f"{n} NATS nodes but FOLIO_NATS_REPLICAS {replicas}: losing a node would lose data")
    vols = nats["spec"]["template"]["spec"].get("volumes", [])
    cm_name = next((v["configMap"]["name"] for v in vols if "configMap" in v), None)
    conf = ((by_kind.get("ConfigMap") or {}).get(cm_name) or {}).get("data", {}).get("nats.conf")
    if conf is None:
        fail(label, "the nats StatefulSet mounts no ConfigMap with nats.conf")
        return
    routes = re.findall(r"nats://(nats-\d+)\.nats:6222", conf)
    if n > 1 and sorted(routes) != [f"nats-{i}" for i in range(n)]:
        fail(label, f"nats.conf routes to {routes}, not to the {n} nodes nats-0..{n - 1}")
    if n == 1 and re.search(r"^\s*cluster\s*\{", conf, re.M):
        fail(label, "one NATS node with a cluster block: it would wait for routes that never come")
    include = "include ../nats-permissions/permissions.conf"
    if include not in conf:
        fail(label, f"nats.conf does not `{include}` (deploy/nats/permissions.conf)")
    if n > 1 and not re.search(r"cluster\s*\{[^}]*tls\s*\{[^}]*verify:\s*true", conf, re.S):
        fail(label, "the cluster's routes are not mutual TLS (cluster { tls { ... verify: true } })")
    if shutil.which("nats-server"):
        # As the pod sees it: the permissions ConfigMap, the routes' TLS
        # Secret (a throwaway CA and certificate here) and the passwords.
        with tempfile.TemporaryDirectory() as tmp:
            perms = ((by_kind.get("ConfigMap") or {}).get(
                next((v["configMap"]["name"] for v in vols if "configMap" in v
                      and v["configMap"]["name"].startswith("nats-permissions")), ""), {}) or {}).get("data", {})
            if "permissions.conf" not in perms:
                fail(label, "the nats StatefulSet mounts no ConfigMap nats-permissions with permissions.conf")
            # The pod's layout: /etc/nats/nats.conf, /etc/nats-permissions/.
            os.makedirs(os.path.join(tmp, "nats"))
            os.makedirs(os.path.join(tmp, "nats-permissions"))
            open(os.path.join(tmp, "nats-permissions", "permissions.conf"), "w").write(perms.get("permissions.conf", ""))
            tls = os.path.join(tmp, "tls")
            os.mkdir(tls)
            subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                            "/CN=nats", "-keyout", os.path.join(tls, "tls.key"), "-out", os.path.join(tls, "tls.crt")],
                           capture_output=True, check=True)
            shutil.copy(os.path.join(tls, "tls.crt"), os.path.join(tls, "ca.crt"))
            text = conf.replace("/etc/nats-routes-tls", tls)
            path = os.path.join(tmp, "nats", "nats.conf")
            open(path, "w").write(text)
            env = dict(os.environ, SERVER_NAME="nats-0",
                       **{f"FOLIO_NATS_{u}_PASSWORD": "p0" + u for u in ("INGEST", "EDGE", "SEARCH", "STORAGE")})
            p = subprocess.run(["nats-server", "-c", path, "-t"], capture_output=True, text=True, env=env)
            if p.returncode != 0:
                fail(label, f"nats-server -t refuses nats.conf: {(p.stderr or p.stdout).strip()}")


def main():
    kubectls = ["kubectl"] + [k for k in os.environ.get("FOLIO_KUBECTLS", "").split(":") if k]
    for k in kubectls:
        if not shutil.which(k):
            print(f"k8s_check: {k} not found (scripts/install-deps.sh installs kubernetes-client)", file=sys.stderr)
            return 1
    overlays = [K8S] + sorted(os.path.join(K8S, "overlays", d) for d in os.listdir(os.path.join(K8S, "overlays")))
    parts = [os.path.join(K8S, "base"), os.path.join(K8S, "common")]
    secrets_ext = external_secrets()
    flag_cache = {}
    checked = 0
    for kubectl in kubectls:
        for path in parts:
            render(kubectl, path)
        for path in overlays:
            docs = render(kubectl, path)
            if docs is None:
                continue
            check_overlay(f"[{kubectl} {os.path.relpath(path, SRC)}]", docs, secrets_ext, flag_cache)
            checked += len(docs)
    if not any(flag_cache.values()):
        print("k8s_check: note: no folio binaries in FOLIO_BIN_DIR; FOLIO_* names not checked against --help")
    if failures:
        print("\n".join(failures), file=sys.stderr)
        print(f"k8s_check: {len(failures)} failure(s)", file=sys.stderr)
        return 1
    print(f"k8s_check: {checked} objects in {len(overlays)} overlays rendered by {', '.join(kubectls)}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
