#!/usr/bin/env bash
# Builds the hashicorp/tfe Terraform provider from a source checkout of its public repository
# (github.com/hashicorp/terraform-provider-tfe, 0.79.x; the provider registry serves no binary the
# Go module proxy could give us) into a filesystem mirror for tofu:
#   .tools/tfe-provider-mirror/registry.opentofu.org/hashicorp/tfe/<version>/<os>_<arch>/
# The version is the checkout's version/VERSION. Its Go module dependencies come from the Go
# module proxy. Rebuilt only when the checkout's Go sources change (a stamp of their digest).
#
#   STACKSHIP_TFE_PROVIDER_SRC=<checkout> bash scripts/tfe-provider/build.sh
#
# Prints the mirror directory on stdout (progress on stderr). The mirror is kept apart from
# .tools/providers, the sandbox's mirror: runs never get this provider.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
src="${STACKSHIP_TFE_PROVIDER_SRC:?set STACKSHIP_TFE_PROVIDER_SRC to a terraform-provider-tfe source checkout}"
step() { printf '[tfe-provider] %s\n' "$*" >&2; }

[[ -f "$src/go.mod" && -f "$src/version/VERSION" ]] || { step "$src is not a terraform-provider-tfe checkout (no go.mod or version/VERSION)"; exit 1; }
grep -q '^module github.com/hashicorp/terraform-provider-tfe$' "$src/go.mod" || { step "$src/go.mod is not github.com/hashicorp/terraform-provider-tfe"; exit 1; }
version="$(tr -d '[:space:]' <"$src/version/VERSION")"
platform="$(go env GOOS)_$(go env GOARCH)"
mirror="$root/.tools/tfe-provider-mirror"
dir="$mirror/registry.opentofu.org/hashicorp/tfe/$version/$platform"
exe="$dir/terraform-provider-tfe_v$version"
# The stamp lives outside the mirror (tofu scans the mirror tree).
stamp="$root/.tools/.tfe-provider.version"
want="$version $platform $(cd "$src" && find . -path ./website -prune -o \( -name '*.go' -o -name go.mod -o -name go.sum \) -type f -print | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -d' ' -f1)"

if [[ -x "$exe" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  step "hashicorp/tfe $version ok (built earlier from $src)"
else
  step "building hashicorp/tfe $version from $src (a few minutes the first time)…"
  rm -rf "$mirror" "$stamp"
  mkdir -p "$dir"
  (cd "$src" && CGO_ENABLED=0 GOFLAGS="-trimpath -mod=mod" go build -o "$exe" .)
  echo "$want" >"$stamp"
  step "hashicorp/tfe $version built into $mirror"
fi
echo "$mirror"
