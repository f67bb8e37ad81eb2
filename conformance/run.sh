#!/usr/bin/env bash
# Runs the upstream Syncular conformance catalog (release 0.15.48) black-box against a server in conformance-host
# mode. Not part of `mvn verify`: it needs an upstream checkout, which this repository never contains.
#
#   UPSTREAM=/path/to/syncular-checkout-at-4b135eda   (with `bun install` done in it)
#   mvn -Prun -Dsyncular.conformance-host=true -Dsyncular.port=8787 &     # wait for the ready line
#   UPSTREAM=… bash conformance/run.sh [scenario-prefix,…]
#
# bun comes from the npm registry (`npm install bun`). Our driver and test file are copied into the checkout's
# packages/conformance/test/ for the run and removed afterwards.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${UPSTREAM:?set UPSTREAM to an upstream checkout at release 0.15.48 (commit 4b135eda)}"
target="$UPSTREAM/packages/conformance/test"
cp "$here/http-server-driver.ts" "$target/http-server-driver.ts"
cp "$here/java-server.test.ts" "$target/java-server.test.ts"
trap 'rm -f "$target/http-server-driver.ts" "$target/java-server.test.ts"' EXIT
[ $# -gt 0 ] && export SYNCULAR_SCENARIOS="$1"
cd "$UPSTREAM/packages/conformance"
bun test test/java-server.test.ts
