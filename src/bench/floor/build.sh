#!/usr/bin/env bash
# Builds target/floor/syncular.war: the reconnect storm's floor (FloorEndpoint), our wire codec and nothing else.
# Deploy it in place of our WAR: OURS_WAR=target/floor/syncular.war SERVERS=ours-wildfly src/bench/side-by-side.sh
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
API=$HOME/.m2/repository/jakarta/platform/jakarta.jakartaee-api/10.0.0/jakarta.jakartaee-api-10.0.0.jar
OUT=$ROOT/target/floor
[[ -d "$ROOT/target/classes/syncular/jakarta/wire" ]] || { echo "build the project first (mvn package)" >&2; exit 1; }
rm -rf "$OUT" && mkdir -p "$OUT/war/WEB-INF/classes/syncular/jakarta"
cp -r "$ROOT/target/classes/syncular/jakarta/wire" "$OUT/war/WEB-INF/classes/syncular/jakarta/"
javac --release 17 -d "$OUT/war/WEB-INF/classes" -cp "$API:$ROOT/target/classes" \
  "$ROOT"/src/bench/floor/syncular/jakarta/bench/floor/*.java
(cd "$OUT/war" && jar -cf "$OUT/syncular.war" .)
echo "$OUT/syncular.war"
