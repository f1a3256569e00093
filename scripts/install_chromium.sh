#!/usr/bin/env bash
# Installs Debian's Chromium for the viewer's browser tests, once. If it cannot be installed
# (no apt, not root, no network), it leaves a marker with the reason, and only then may the
# browser tests skip; anywhere else a missing browser fails them.
set -uo pipefail
marker="${TMPDIR:-/tmp}/areal-devkit-chromium-unavailable"
rm -f "$marker"
for name in chromium chromium-browser google-chrome; do
  command -v "$name" >/dev/null 2>&1 && exit 0
done
if ! command -v apt-get >/dev/null 2>&1; then
  echo "apt-get is not available on this machine" > "$marker"; exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "installing Chromium needs root (apt-get install chromium)" > "$marker"; exit 0
fi
echo "installing chromium (Debian package) for the viewer's browser tests"
if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >/tmp/areal-devkit-chromium-install.log 2>&1; then
  echo "apt-get install chromium failed: $(tail -3 /tmp/areal-devkit-chromium-install.log)" > "$marker"
fi
exit 0
