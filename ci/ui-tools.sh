#!/usr/bin/env bash
# What the inspect UI tests drive: a real headless browser (Debian's chromium and chromium-driver)
# and a real pseudo-terminal (tmux), installed when missing; nothing downloads a browser at run time.
# Usage: ci/ui-tools.sh ensure   → installs if needed, then prints CHROMIUM=... and CHROMEDRIVER=...
set -euo pipefail

browser=${SLUICE_CHROMIUM:-/usr/bin/chromium}
driver=${SLUICE_CHROMEDRIVER:-/usr/bin/chromedriver}

die() { echo "ci/ui-tools.sh: $*" >&2; exit 1; }

case "${1:-ensure}" in
  ensure)
    if [ ! -x "$browser" ] || [ ! -x "$driver" ] || ! command -v tmux >/dev/null; then
      [ "$(id -u)" = 0 ] || die "Chromium or tmux is not installed and installing them needs root: apt-get install -y chromium chromium-driver tmux"
      command -v apt-get >/dev/null || die "no apt-get; install Chromium and ChromeDriver and set SLUICE_CHROMIUM / SLUICE_CHROMEDRIVER"
      log=$(mktemp)
      DEBIAN_FRONTEND=noninteractive apt-get update -q >"$log" 2>&1 \
        && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium chromium-driver tmux >>"$log" 2>&1 \
        || { tail -n 30 "$log" >&2; die "apt-get could not install chromium chromium-driver tmux (log: $log)"; }
      rm -f "$log"
    fi
    echo "CHROMIUM=$browser"
    echo "CHROMEDRIVER=$driver"
    ;;
  *) die "unknown command '$1' (ensure)" ;;
esac
