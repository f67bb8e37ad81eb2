#!/usr/bin/env bash
# Builds target/floor/syncular.war: the reconnect storm's floor (FloorEndpoint), our wire codec and nothing else;
# and target/floor/syncular-db.war, the database floor: the same with one PostgreSQL round trip per push and per
# round through the WAR's own datasource (FloorDatabase; our jboss-web.xml, so WildFly only).
# Deploy either in place of our WAR: OURS_WAR=target/floor/syncular.war SERVERS=ours-wildfly src/bench/side-by-side.sh
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
cp "$ROOT/src/main/webapp/WEB-INF/jboss-web.xml" "$OUT/war/WEB-INF/"
mkdir -p "$OUT/war/WEB-INF/lib" && cp "$ROOT"/target/syncular/WEB-INF/lib/postgresql-*.jar "$OUT/war/WEB-INF/lib/"
cat >"$OUT/war/WEB-INF/web.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<web-app xmlns="https://jakarta.ee/xml/ns/jakartaee" version="6.0">
  <context-param><param-name>floor.database</param-name><param-value>true</param-value></context-param>
</web-app>
XML
(cd "$OUT/war" && jar -cf "$OUT/syncular-db.war" .)
echo "$OUT/syncular.war $OUT/syncular-db.war"
