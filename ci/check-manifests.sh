#!/usr/bin/env bash
# Checks deploy/kubernetes/*.yaml against the Kubernetes JSON schemas, offline: no cluster runs
# here. kubernetes-validate (PyPI) carries the schemas of each Kubernetes release; --strict also
# refuses fields the schema does not know (a misspelt key would otherwise be ignored by the API).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
venv=target/k8s-venv
if [ ! -x "$venv/bin/kubernetes-validate" ]; then
  python3 -m venv "$venv" || { echo "check-manifests.sh: python3 -m venv failed (Debian: apt-get install python3-venv)" >&2; exit 1; }
  "$venv/bin/pip" install -q --disable-pip-version-check kubernetes-validate==1.37.0
fi
"$venv/bin/kubernetes-validate" --strict --kubernetes-version 1.37.0 deploy/kubernetes/*.yaml
