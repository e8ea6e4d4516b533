#!/usr/bin/env python3
"""Checks deploy/kubernetes/*.yaml offline: Kubernetes' own kinds with kubernetes-validate
(PyPI) in strict mode, KEDA's against deploy/kubernetes/schemas/keda.json (jsonschema), and
the few rules ingestd's manual asks of them. Prints one line per resource; exits 1 on any fault.
"""
import json
import os
import sys

import jsonschema
import kubernetes_validate
import yaml

ROOT = sys.argv[1]
faults = []
schema = json.load(open(os.path.join(ROOT, "schemas", "keda.json")))
seen = {}
for name in sorted(os.listdir(ROOT)):
    if not name.endswith(".yaml"):
        continue
    for doc in yaml.safe_load_all(open(os.path.join(ROOT, name))):
        if not doc:
            continue
        kind = doc["kind"]
        seen[kind] = doc
        try:
            if doc["apiVersion"].startswith("keda.sh/"):
                jsonschema.validate(doc, {**schema, "$ref": f"#/definitions/{kind}"})
            else:
                kubernetes_validate.validate(doc, "1.30", strict=True)
            print(f"ok {name} {kind}/{doc['metadata']['name']}")
        except Exception as error:  # noqa: BLE001 - every fault is reported
            faults.append(f"{name} {kind}: {str(error).splitlines()[0]}")

deployment = seen.get("Deployment")
if deployment:
    pod = deployment["spec"]["template"]["spec"]
    args = pod["containers"][0]["args"]
    grace = next(float(a.split("=")[1]) for a in args if a.startswith("--grace="))
    if pod["terminationGracePeriodSeconds"] <= grace + 5:
        faults.append("terminationGracePeriodSeconds must be above --grace + 5 s")
    if any("value" in e and e["name"] in ("AWS_SECRET_ACCESS_KEY", "INGESTD_DATABASE_URL") for e in pod["containers"][0].get("env", [])):
        faults.append("secrets must be mounted as files, not put in the environment")
    probes = pod["containers"][0]
    if probes["readinessProbe"]["httpGet"]["path"] != "/readyz" or probes["livenessProbe"]["httpGet"]["path"] != "/healthz":
        faults.append("readiness must be /readyz and liveness /healthz")
scaled = seen.get("ScaledObject")
if scaled and deployment and scaled["spec"]["scaleTargetRef"]["name"] != deployment["metadata"]["name"]:
    faults.append("the ScaledObject must scale the worker Deployment")
for kind in ("Deployment", "PodDisruptionBudget", "ScaledObject", "TriggerAuthentication", "CronJob"):
    if kind not in seen:
        faults.append(f"no {kind}")
for fault in faults:
    print("FAULT", fault)
sys.exit(1 if faults else 0)
