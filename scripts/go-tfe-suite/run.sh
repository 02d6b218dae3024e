#!/usr/bin/env bash
# go-tfe's own integration tests (the pinned release from the Go module proxy, its assertions
# untouched) against a running StackShip: every test named in allowlist.txt runs in its own
# process (a panicking test cannot take the others down) and one line per test is printed:
#   PASS <Test> <seconds>   FAIL <Test> <seconds>   SKIP <Test> <seconds>
# then `go-tfe suite: N passed, N failed, N skipped`. Exit 1 when any allowlisted test failed.
#
#   TFE_ADDRESS=https://localhost:8443 TFE_TOKEN=<deployment administrator token> \
#     SSL_CERT_FILE=<data dir>/tls/ca-bundle.pem bash scripts/go-tfe-suite/run.sh [regexp]
#
# A regexp narrows the allowlist (e.g. '^TestWorkspaces'). GO_TFE_SUITE_LOGS=<dir> keeps each
# test's verbose output there (default: a temporary directory, printed). --build only builds.
# The test binary is built once per version into .tools/build/go-tfe-suite-<version>/ (the Go
# build and module caches make a rebuild after a version bump quick).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
version=v1.101.0 # the same release scripts/go-tfe-smoke pins
build="$root/.tools/build/go-tfe-suite-$version"
binary="$build/go-tfe.test"

step() { printf '[go-tfe-suite] %s\n' "$*" >&2; }

if [[ ! -x "$binary" || "$(cat "$build/.version" 2>/dev/null)" != "$version" ]]; then
  step "building go-tfe $version's tests (first run only)…"
  rm -rf "$build"
  mkdir -p "$build"
  src="$(cd "$build" && GOFLAGS=-mod=mod go mod download -json "github.com/hashicorp/go-tfe@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [[ -d "$src" ]] || { step "go mod download did not name a directory for go-tfe $version" >&2; exit 1; }
  # The module cache is read-only; the tests run from a writable copy (their fixtures are
  # relative paths such as test-fixtures/).
  cp -R "$src" "$build/src"
  chmod -R u+w "$build/src"
  (cd "$build/src" && GOFLAGS=-mod=mod CGO_ENABLED=0 go test -c -o "$binary" .)
  echo "$version" >"$build/.version"
fi
[[ "${1:-}" == "--build" ]] && exit 0

: "${TFE_ADDRESS:?set TFE_ADDRESS to the StackShip address (https://localhost:8443)}"
: "${TFE_TOKEN:?set TFE_TOKEN to a deployment administrator token}"
export TFE_ADDRESS TFE_TOKEN
# go-tfe's switches for HCP-only and beta fixtures stay off: StackShip is neither.
unset ENABLE_TFE ENABLE_BETA ENABLE_HYOK_INTEGRATION_TESTS

narrow="${1:-.}"
logs="${GO_TFE_SUITE_LOGS:-$(mktemp -d "${TMPDIR:-/tmp}/go-tfe-suite.XXXXXX")}"
mkdir -p "$logs"
step "verbose output of each test in $logs"

# allowlist.txt: `TestName` runs; `-TestName/subtest reason` leaves out a subtest of an allowed
# test; `-TestName reason` and `-file:<name> reason` are documentation of what is excluded and why.
declare -a tests=()
declare -A skips=()
while IFS= read -r line; do
  line="${line%%#*}"
  [[ -z "${line// /}" ]] && continue
  name="${line%% *}"
  if [[ "$name" == -*/* ]]; then
    parent="${name#-}"; parent="${parent%%/*}"
    sub="${name#*/}"
    sub="$(printf '%s' "$sub" | sed 's/[][\\.*^$()+?{}|]/\\&/g')"
    skips[$parent]="${skips[$parent]:+${skips[$parent]}|}$sub"
  elif [[ "$name" != -* ]]; then
    tests+=("$name")
  fi
done <"$here/allowlist.txt"

passed=0 failed=0 skipped=0
for name in "${tests[@]}"; do
  [[ "$name" =~ $narrow ]] || continue
  args=(-test.run "^${name}\$" -test.v -test.count=1 -test.timeout "${GO_TFE_TEST_TIMEOUT:-180s}")
  [[ -n "${skips[$name]:-}" ]] && args+=(-test.skip "^${name}\$/^(${skips[$name]})\$")
  started=$SECONDS
  set +e
  (cd "$build/src" && "$binary" "${args[@]}") >"$logs/$name.log" 2>&1
  code=$?
  set -e
  took=$((SECONDS - started))
  result="$(grep -E "^--- (PASS|FAIL|SKIP): ${name} " "$logs/$name.log" | head -n1 | cut -d' ' -f2 | tr -d ':' || true)"
  # No result line (a panic, a timeout) or a non-zero exit is a failure whatever was printed.
  if [[ $code -ne 0 || -z "$result" ]]; then result=FAIL; fi
  case "$result" in
    PASS) passed=$((passed + 1)) ;;
    SKIP) skipped=$((skipped + 1)) ;;
    *) failed=$((failed + 1)) ;;
  esac
  echo "$result $name $took"
  if [[ "$result" == FAIL && -n "${GO_TFE_SUITE_SHOW_FAILURES:-}" ]]; then grep -vE '^(=== |    --- (PASS|SKIP))' "$logs/$name.log" | head -n 60 >&2; fi
done
echo "go-tfe suite: $passed passed, $failed failed, $skipped skipped"
[[ $failed -eq 0 ]]
