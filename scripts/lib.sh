# Shared helpers for the scripts in this folder (sourced, not run).
say() { printf '[%s] %s\n' "${SCRIPT_NAME:-stackship}" "$*"; }

# Installs the npm dependencies when node_modules is missing or older than package-lock.json.
ensure_node_modules() {
  local root=$1
  local stamp="$root/node_modules/.package-lock.json"
  if [[ ! -f "$stamp" || "$root/package-lock.json" -nt "$stamp" ]]; then
    say "installing npm dependencies (first run compiles better-sqlite3: about two minutes)…"
    (cd "$root" && npm ci --no-audit --no-fund --loglevel=error)
  fi
}

is_root() { [[ "$(id -u)" == 0 ]]; }
