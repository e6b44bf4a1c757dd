#!/usr/bin/env bash
# Makes sure Debian's chromium is installed for the browser tests of the buyer's payment page.
# The tests drive it with playwright-core, which never downloads a browser of its own: the
# distribution's package is the one these machines can install, and the one that gets patched.
# A Japanese font comes with it, because the page is Japanese by default and a screenshot of
# missing-glyph boxes proves nothing.
# Fast when everything is there; otherwise one `apt-get update` and one install, quiet unless
# something fails. CHROMIUM_PATH overrides where chromium is expected (default /usr/bin/chromium).
set -euo pipefail

chromium_path="${CHROMIUM_PATH:-/usr/bin/chromium}"
japanese_font=fonts-ipafont-gothic

log() { echo "chromium: $*"; }
die() { echo "chromium: ERROR: $*" >&2; exit 1; }

missing=()
[[ -x "$chromium_path" ]] || missing+=(chromium)
[[ "$(dpkg-query -W -f='${Status}' "$japanese_font" 2>/dev/null)" == "install ok installed" ]] || missing+=("$japanese_font")
[[ ${#missing[@]} -eq 0 ]] && exit 0

command -v apt-get >/dev/null 2>&1 ||
  die "missing: ${missing[*]}, and apt-get is not available here; install Debian's packages yourself."
[[ "$(id -u)" -eq 0 ]] ||
  die "missing: ${missing[*]}; installing needs root: apt-get update && apt-get install -y ${missing[*]}"

log_file="$(mktemp)"
trap 'rm -f "$log_file"' EXIT

# run_quiet CMD...: runs CMD with its output kept aside, printed only if it fails.
run_quiet() {
  if ! "$@" >"$log_file" 2>&1; then
    cat "$log_file" >&2
    die "failed: $*"
  fi
}

log "installing ${missing[*]} (apt-get)"
export DEBIAN_FRONTEND=noninteractive
run_quiet apt-get update -q
run_quiet apt-get install -y -q --no-install-recommends "${missing[@]}"
[[ -x "$chromium_path" ]] || die "installed ${missing[*]}, but $chromium_path is still missing."
log "ready: $("$chromium_path" --version 2>/dev/null || echo "$chromium_path")"
