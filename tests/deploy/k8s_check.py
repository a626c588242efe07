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
- make-secrets.sh's Secrets: folio-tokens and nats-routes-tls;
- NetworkPolicies (issue 24): a default deny of ingress and egress, and, evaluated
  flow by flow, exactly the flows folio uses allowed (clients to NATS 4222, routes
  6222, ingest/edge to storage 8083, the ingress controller to edge and ingest,
  monitoring to 9090/8222, DNS) and others denied;
- placement: NATS with required anti-affinity per node and a DoNotSchedule zone
  spread (when it has more than one node), edge/storage/search zone spreads;
  ReadWriteOncePod volumes for ingest, storage and search; the example
  StorageClass binds WaitForFirstConsumer;
- the write API's Ingress on a host no readers' rule uses, its body limit at most
  ingest's largest body, with connection and rate limits and timeouts;
- every image pinned (a digest, or a tag with a patch version or a commit; never
  latest); deploy/upgrade.sh --dry-run rolls edge, search, storage, ingest in that
  order with a rollout wait after each; pin-images.sh pins a copy of common/;
- StatefulSets' memory requests equal their limits;
- a PodMonitor under deploy/k8s or a kubernetes_sd_configs scrape config under
  deploy/prometheus exists.
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
    elif not image_pinned(image):
        fail(cw, f"image {image!r} is not pinned: a digest, or a tag with a patch version "
                 f"(2.9.10-alpine) or `git describe --tags --always` (deploy/k8s/pin-images.sh)")
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

    check_network_policies(label, by_kind, pods)
    check_placement(label, by_kind)
    check_ingresses(label, by_kind)
    check_stateful_memory(label, by_kind)
    check_nats(label, by_kind)


def selector_matches(sel, labels):
    """A LabelSelector (matchLabels, matchExpressions In/NotIn/Exists) against labels; {} selects all."""
    sel = sel or {}
    if any(labels.get(k) != v for k, v in (sel.get("matchLabels") or {}).items()):
        return False
    for e in sel.get("matchExpressions") or []:
        v = labels.get(e["key"])
        op = e["operator"]
        if (op == "In" and v not in e.get("values", [])) or (op == "NotIn" and v in e.get("values", [])) \
                or (op == "Exists" and v is None) or (op == "DoesNotExist" and v is not None):
            return False
    return True


def peer_matches(peer, ns, end):
    """A NetworkPolicy peer (from/to) of a policy in namespace ns against end = (namespace labels, pod labels)."""
    ns_labels, pod_labels = end
    if "ipBlock" in peer:
        return False
    if "namespaceSelector" in peer:
        if not selector_matches(peer["namespaceSelector"], ns_labels):
            return False
    elif ns_labels.get("kubernetes.io/metadata.name") != ns:
        return False
    return "podSelector" not in peer or selector_matches(peer["podSelector"], pod_labels)


def policy_allows(policies, ns, kind, me, peer, port, proto="TCP"):
    """Whether the policies of namespace ns let pod `me` (its labels) take
    `kind` (Ingress or Egress) traffic from/to `peer` on port/proto."""
    key, peers_key = ("ingress", "from") if kind == "Ingress" else ("egress", "to")
    mine = [p for p in policies if selector_matches(p["spec"].get("podSelector"), me)
            and kind in p["spec"].get("policyTypes", ["Ingress"])]
    if not mine:
        return True
    for p in mine:
        for rule in p["spec"].get(key) or []:
            peers = rule.get(peers_key)
            ports = rule.get("ports")
            if (not peers or any(peer_matches(x, ns, peer) for x in peers)) and \
                    (not ports or any(q.get("port") == port and q.get("protocol", "TCP") == proto for q in ports)):
                return True
    return False


INGRESS_NS = "ingress-nginx"  # the namespaces networkpolicy.yaml names (deploy/k8s/README.md)
MONITORING_NS = "monitoring"


def check_network_policies(label, by_kind, pods):
    """Default deny in and out, then exactly the flows folio uses (base/networkpolicy.yaml)."""
    policies = list(by_kind.get("NetworkPolicy", {}).values())
    if not policies:
        fail(label, "no NetworkPolicy: every pod is open to the whole cluster")
        return
    ns = policies[0]["metadata"].get("namespace")
    if not any(p["spec"].get("podSelector") in ({}, None) and not p["spec"].get("ingress")
               and not p["spec"].get("egress") and {"Ingress", "Egress"} <= set(p["spec"].get("policyTypes", []))
               for p in policies):
        fail(label, "no default-deny NetworkPolicy (podSelector {}, policyTypes Ingress and Egress, no rules)")
    here = {"kubernetes.io/metadata.name": ns}
    pod_labels = {}
    for _, t in pods:
        labels = t["metadata"].get("labels", {})
        pod_labels[labels.get("app.kubernetes.io/name", "")] = labels
    outside = lambda name: ({"kubernetes.io/metadata.name": name}, {})

    def flow(src, dst, port, want, proto="TCP"):
        s = (here, pod_labels[src]) if src in pod_labels else outside(src)
        d = (here, pod_labels[dst]) if dst in pod_labels else outside(dst)
        ok = ((s[0] is not here or policy_allows(policies, ns, "Egress", s[1], d, port, proto)) and
              (d[0] is not here or policy_allows(policies, ns, "Ingress", d[1], s, port, proto)))
        if ok != want:
            fail(label, f"NetworkPolicies {'block' if want else 'allow'} {src} -> {dst}:{port}/{proto}")

    folio = [n for n in pod_labels if n.startswith("folio-")]
    if "nats" not in pod_labels or len(folio) < 4:
        fail(label, f"NetworkPolicy check: expected nats and four folio workloads, got {sorted(pod_labels)}")
        return
    for n in folio:
        flow(n, "nats", 4222, True)
        flow(n, "kube-system", 53, True, "UDP")
        flow(n, "kube-system", 53, True, "TCP")
        flow(MONITORING_NS, n, 9090, True)
        flow(INGRESS_NS, n, 9090, False)
        flow("default", n, 9090, False)
        flow(n, "default", 443, False)  # no way out but what folio uses
    flow("nats", "nats", 6222, True)
    flow("folio-edge", "nats", 6222, False)
    flow(MONITORING_NS, "nats", 8222, True)
    flow("default", "nats", 4222, False)
    flow(INGRESS_NS, "nats", 4222, False)
    flow("folio-ingest", "folio-storage", 8083, True)
    flow("folio-edge", "folio-storage", 8083, True)
    flow("folio-search", "folio-storage", 8083, False)
    flow("folio-storage", "folio-storage", 8083, False)  # replicas replicate through NATS
    flow(INGRESS_NS, "folio-storage", 8083, False)
    flow(INGRESS_NS, "folio-edge", 8081, True)
    flow(INGRESS_NS, "folio-ingest", 8080, True)
    flow("folio-edge", "folio-ingest", 8080, False)
    flow("default", "folio-ingest", 8080, False)
    flow("default", "folio-edge", 8081, False)
    flow("folio-edge", "folio-search", 8082, False)  # queries go over NATS (search.query)


def check_placement(label, by_kind):
    """NATS: one node per machine (required) and spread over zones; the edges,
    storage and search spread over zones; ingest's, storage's and search's
    volumes are ReadWriteOncePod."""
    sts = by_kind.get("StatefulSet", {})
    nats = sts.get("nats")
    if nats is not None:
        pod = nats["spec"]["template"]["spec"]
        req = ((pod.get("affinity") or {}).get("podAntiAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution") or []
        if not any(t.get("topologyKey") == "kubernetes.io/hostname" for t in req):
            fail(label, "StatefulSet nats: no required podAntiAffinity on kubernetes.io/hostname")
        zone = [c for c in pod.get("topologySpreadConstraints") or []
                if c.get("topologyKey") == "topology.kubernetes.io/zone"]
        if not zone:
            fail(label, "StatefulSet nats: no topologySpreadConstraints on topology.kubernetes.io/zone")
        elif nats["spec"].get("replicas", 1) > 1 and any(c.get("whenUnsatisfiable") != "DoNotSchedule" for c in zone):
            fail(label, "StatefulSet nats: its zone spread is not DoNotSchedule")
    for kind, name in (("Deployment", "edge"), ("StatefulSet", "storage"), ("StatefulSet", "search")):
        d = by_kind.get(kind, {}).get(name)
        if d is None:
            continue
        keys = {c.get("topologyKey") for c in d["spec"]["template"]["spec"].get("topologySpreadConstraints") or []}
        if "topology.kubernetes.io/zone" not in keys:
            fail(label, f"{kind}/{name}: no topologySpreadConstraints on topology.kubernetes.io/zone")
        if name == "edge" and "kubernetes.io/hostname" not in keys:
            fail(label, f"{kind}/{name}: no topologySpreadConstraints on kubernetes.io/hostname")
    for name in ("ingest", "storage", "search"):
        d = sts.get(name)
        if d is None:
            fail(label, f"no StatefulSet {name}")
            continue
        for v in d["spec"].get("volumeClaimTemplates", []):
            if v["spec"].get("accessModes") != ["ReadWriteOncePod"]:
                fail(label, f"StatefulSet/{name}: volume {v['metadata']['name']} is "
                            f"{v['spec'].get('accessModes')}, not ReadWriteOncePod")


def check_storageclass_example():
    path = os.path.join(K8S, "examples", "storageclass.yaml")
    try:
        docs = [d for d in yaml.safe_load_all(open(path)) if d]
    except (OSError, yaml.YAMLError) as e:
        fail("deploy/k8s/examples/storageclass.yaml", str(e))
        return
    if not any(d.get("kind") == "StorageClass" and d.get("volumeBindingMode") == "WaitForFirstConsumer" for d in docs):
        fail("deploy/k8s/examples/storageclass.yaml", "no StorageClass with volumeBindingMode WaitForFirstConsumer")


# ingest's largest push body with folio-storage (services/ingest/config.cc
# ReadLimits: --max-body 64 MiB grown to one 64 MiB attachment in base64 + 1 MiB).
INGEST_MAX_BODY = max(64 << 20, (64 << 20) // 3 * 4 + (1 << 20))


def nginx_size(v):
    m = re.fullmatch(r"(\d+)([kKmMgG]?)", str(v).strip())
    if not m:
        return None
    return int(m.group(1)) << {"": 0, "k": 10, "m": 20, "g": 30}[m.group(2).lower()]


def check_ingresses(label, by_kind):
    """The write API on a host of its own (no readers' host routes to ingest, no
    API host to the edges), with a body limit no larger than ingest's own and
    connection and rate limits."""
    hosts = {}  # host -> {service names}
    api = []
    for ing in by_kind.get("Ingress", {}).values():
        for rule in ing["spec"].get("rules", []):
            for p in (rule.get("http") or {}).get("paths", []):
                svc = p["backend"]["service"]["name"]
                hosts.setdefault(rule.get("host"), set()).add(svc)
                if svc == "ingest" and ing not in api:
                    api.append(ing)
    if not api:
        fail(label, "no Ingress routes to ingest (the write API)")
    for host, svcs in hosts.items():
        if "ingest" in svcs and len(svcs) > 1:
            fail(label, f"host {host!r} serves the write API and {sorted(svcs - {'ingest'})}: give the API its own host")
        if host is None and "ingest" in svcs:
            fail(label, "the write API's Ingress rule names no host")
    for ing in api:
        ann = ing["metadata"].get("annotations") or {}
        w = f"{label} Ingress/{ing['metadata']['name']}"
        size = nginx_size(ann.get("nginx.ingress.kubernetes.io/proxy-body-size", ""))
        if size is None or size == 0 or size > INGEST_MAX_BODY:
            fail(w, f"proxy-body-size {ann.get('nginx.ingress.kubernetes.io/proxy-body-size')!r} is unset, "
                    f"unlimited or above ingest's largest body ({INGEST_MAX_BODY} bytes)")
        for a in ("limit-connections", "limit-rps", "proxy-read-timeout", "proxy-send-timeout"):
            if not str(ann.get(f"nginx.ingress.kubernetes.io/{a}", "")).isdigit():
                fail(w, f"no nginx.ingress.kubernetes.io/{a}")


# A pinned tag: a version with its patch number (2.9.10-alpine, v1.4.2,
# v1.4.2-3-gabc1234) or a bare commit (`git describe --always` without tags).
PINNED_TAG = re.compile(r"^(v?\d+\.\d+\.\d+([-.+][0-9A-Za-z.-]+)?|[0-9a-f]{7,40})$")


def image_pinned(image):
    if re.search(r"@sha256:[0-9a-f]{64}$", image):
        return True
    tag = image.rsplit("/", 1)[-1].partition(":")[2]
    return tag != "latest" and bool(PINNED_TAG.match(tag))


def check_release_scripts():
    """deploy/upgrade.sh --dry-run rolls edge, search, storage, ingest in that
    order, waiting for each; deploy/k8s/pin-images.sh pins a copy of common/'s
    images: and leaves NATS alone."""
    p = subprocess.run([os.path.join(SRC, "deploy", "upgrade.sh"), "1.2.3", "--dry-run"],
                       capture_output=True, text=True)
    cmds = [l[2:] for l in p.stdout.splitlines() if l.startswith("+ ")]
    want = []
    for w in ("deployment/edge", "statefulset/search", "statefulset/storage", "statefulset/ingest"):
        want += [f"set image {w}", f"rollout status {w}"]
    got = [re.sub(r"^kubectl -n \S+ ", "", c) for c in cmds]
    if p.returncode != 0 or len(got) != len(want) or not all(g.startswith(w) for g, w in zip(got, want)):
        fail("deploy/upgrade.sh --dry-run", f"expected {want}, got {cmds} (exit {p.returncode}) {p.stderr.strip()}")
    src = os.path.join(K8S, "common", "kustomization.yaml")
    with tempfile.TemporaryDirectory() as d:
        copy = os.path.join(d, "kustomization.yaml")
        shutil.copy(src, copy)
        p = subprocess.run([os.path.join(K8S, "pin-images.sh"), "v9.8.7", "--file", copy],
                           capture_output=True, text=True)
        images = {i["name"]: i for i in (yaml.safe_load(open(copy)) or {}).get("images", [])}
        before = {i["name"]: i for i in (yaml.safe_load(open(src)) or {}).get("images", [])}
        if p.returncode != 0 or any(images.get(f"folio/{s}", {}).get("newTag") != "v9.8.7"
                                    for s in ("ingest", "edge", "search", "storage")) \
                or images.get("nats") != before.get("nats"):
            fail("deploy/k8s/pin-images.sh", f"did not pin folio's four images alone: {images} {p.stderr.strip()}")


def check_stateful_memory(label, by_kind):
    """A stateful pod's memory request equals its limit: the scheduler places
    it on what it will use, and it is evicted last (loadtest/sizing.py)."""
    for name, d in by_kind.get("StatefulSet", {}).items():
        for c in d["spec"]["template"]["spec"].get("containers", []):
            res = c.get("resources") or {}
            req, lim = (res.get("requests") or {}).get("memory"), (res.get("limits") or {}).get("memory")
            if req != lim:
                fail(label, f"StatefulSet/{name} container {c['name']}: memory request {req} != limit {lim}")


def check_scrape_config():
    """Something scrapes the pods on Kubernetes: a PodMonitor under deploy/k8s
    (Prometheus Operator) or a Prometheus config with kubernetes_sd_configs
    under deploy/prometheus."""
    for root, needle in ((K8S, re.compile(r"^kind:\s*PodMonitor\s*$", re.M)),
                         (os.path.join(SRC, "deploy", "prometheus"), re.compile(r"^\s*kubernetes_sd_configs:", re.M))):
        for d, _, files in os.walk(root):
            for f in files:
                if f.endswith((".yaml", ".yml")) and needle.search(open(os.path.join(d, f), errors="replace").read()):
                    return
    fail("deploy", "no `kind: PodMonitor` under deploy/k8s and no `kubernetes_sd_configs` under deploy/prometheus: "
                   "nothing scrapes the pods' /metrics on Kubernetes")


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
    check_storageclass_example()
    check_release_scripts()
    check_scrape_config()
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
