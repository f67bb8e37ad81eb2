#!/usr/bin/env bash
# Builds target/floor/syncular.war: the reconnect storm's floor (FloorEndpoint) with our wire codec, our Tyrus
# workaround and a beans.xml, nothing else; and target/floor/syncular-db.war, the database floor: the same with one
# PostgreSQL round trip per push and per round through the WAR's own datasource (FloorDatabase; our jboss-web.xml,
# so WildFly only); and target/floor/syncular-db2.war, the two-trip floor: the database floor whose socket open reads
# its client's row and whose round stores the client's cursor beside that read (what our server cannot go below).
# Deploy either in place of our WAR: OURS_WAR=target/floor/syncular.war SERVERS="ours-wildfly ours" \
#   src/bench/side-by-side.sh
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
API=$HOME/.m2/repository/jakarta/platform/jakarta.jakartaee-api/10.0.0/jakarta.jakartaee-api-10.0.0.jar
OUT=$ROOT/target/floor
[[ -d "$ROOT/target/classes/syncular/jakarta/wire" ]] || { echo "build the project first (mvn package)" >&2; exit 1; }
rm -rf "$OUT" && mkdir -p "$OUT/war/WEB-INF/classes/syncular/jakarta"
cp -r "$ROOT/target/classes/syncular/jakarta/wire" "$OUT/war/WEB-INF/classes/syncular/jakarta/"
# our WAR's workaround for Tyrus' idle-timeout scheduling (Payara; a no-op on WildFly), so the floor carries it too
mkdir -p "$OUT/war/WEB-INF/classes/syncular/jakarta/web"
cp "$ROOT"/target/classes/syncular/jakarta/web/WebSocketTimeouts*.class "$OUT/war/WEB-INF/classes/syncular/jakarta/web/"
# a CDI bean archive, as ours is: Payara creates each WebSocket upgrade handler as a CDI managed object in one
cat >"$OUT/war/WEB-INF/beans.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<beans xmlns="https://jakarta.ee/xml/ns/jakartaee" version="4.0" bean-discovery-mode="all"/>
XML
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
cat >"$OUT/war/WEB-INF/web.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<web-app xmlns="https://jakarta.ee/xml/ns/jakartaee" version="6.0">
  <context-param><param-name>floor.database</param-name><param-value>true</param-value></context-param>
  <context-param><param-name>floor.attach</param-name><param-value>true</param-value></context-param>
</web-app>
XML
(cd "$OUT/war" && jar -cf "$OUT/syncular-db2.war" .)
echo "$OUT/syncular.war $OUT/syncular-db.war $OUT/syncular-db2.war"
