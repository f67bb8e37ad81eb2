#!/usr/bin/env bash
# Prepares the freshly unpacked servers for the integration tests (run by Maven in pre-integration-test):
# creates the application users the admin tests use, and on WildFly the PostgreSQL driver module and a validated
# container datasource (README "WildFly 39", option 2). Idempotent: a second run changes nothing.
set -euo pipefail
payara_home="$1"
wildfly_home="$2"
pg_driver_jar="${3:-}"

# WildFly application-realm users: admin1 holds the syncular-admin role, plain1 does not.
if [ -x "$wildfly_home/bin/add-user.sh" ]; then
  cfg="$wildfly_home/standalone/configuration"
  "$wildfly_home/bin/add-user.sh" -a -u admin1 -p 'Adm1n!pass' -g syncular-admin -sc "$cfg" >/dev/null
  "$wildfly_home/bin/add-user.sh" -a -u plain1 -p 'Pl41n!pass' -sc "$cfg" >/dev/null

  # The container pool the tests use on WildFly (java:jboss/datasources/SyncularPG): the WAR's own datasource
  # (jboss-web.xml) cannot carry connection validation on WildFly, this one validates in the background and sorts fatal
  # PostgreSQL errors out of the pool. Written into the files directly (the server is not running yet).
  if [ -n "$pg_driver_jar" ] && ! grep -q 'SyncularPG' "$cfg/standalone.xml"; then
    module="$wildfly_home/modules/org/postgresql/main"
    mkdir -p "$module"
    cp "$pg_driver_jar" "$module/"
    cat > "$module/module.xml" <<XML
<?xml version="1.0" encoding="UTF-8"?>
<module name="org.postgresql" xmlns="urn:jboss:module:1.9">
  <resources><resource-root path="$(basename "$pg_driver_jar")"/></resources>
  <dependencies>
    <module name="java.logging"/><module name="java.naming"/><module name="java.security.jgss"/>
    <module name="java.sql"/><module name="java.transaction.xa"/><module name="jakarta.transaction.api"/>
  </dependencies>
</module>
XML
    python3 - "$cfg/standalone.xml" <<'PY'
import sys
path = sys.argv[1]
xml = open(path, encoding="utf-8").read()
ds = """<datasource jndi-name="java:jboss/datasources/SyncularPG" pool-name="SyncularPG" enabled="true" use-java-context="true">
                    <connection-url>${env.SYNCULAR_DB_URL:jdbc:postgresql://syncular-db-not-configured.invalid/syncular}</connection-url>
                    <driver>postgresql</driver>
                    <connection-property name="ApplicationName">syncular</connection-property>
                    <pool><min-pool-size>0</min-pool-size><max-pool-size>32</max-pool-size><flush-strategy>AllConnections</flush-strategy></pool>
                    <security user-name="${env.SYNCULAR_DB_USER:syncular}" password="${env.SYNCULAR_DB_PASSWORD:}"/>
                    <validation>
                        <valid-connection-checker class-name="org.jboss.jca.adapters.jdbc.extensions.postgres.PostgreSQLValidConnectionChecker"/>
                        <validate-on-match>false</validate-on-match>
                        <background-validation>true</background-validation>
                        <background-validation-millis>10000</background-validation-millis>
                        <exception-sorter class-name="org.jboss.jca.adapters.jdbc.extensions.postgres.PostgreSQLExceptionSorter"/>
                    </validation>
                </datasource>
                <drivers>
                    <driver name="postgresql" module="org.postgresql">
                        <xa-datasource-class>org.postgresql.xa.PGXADataSource</xa-datasource-class>
                    </driver>"""
assert xml.count("<drivers>") == 1
open(path, "w", encoding="utf-8").write(xml.replace("<drivers>", ds, 1))
PY
  fi
  # Undertow refuses request bodies over 10 MiB by default (max-post-size), which would cut blob uploads (SPEC §5.9.3)
  # off far below syncular.blobs.max-bytes; the blob ITs send 200 MiB (README "WildFly 39").
  if ! grep -q 'max-post-size' "$cfg/standalone.xml"; then
    sed -i 's|<http-listener name="default" socket-binding="http"|<http-listener name="default" socket-binding="http" max-post-size="1073741824"|' \
      "$cfg/standalone.xml"
  fi
fi

# Payara file-realm users (same names and passwords): create-file-user needs a running DAS, so the freshly
# unpacked domain is started, given the users, and stopped again before Arquillian starts it for the tests.
if [ -x "$payara_home/bin/asadmin" ]; then
  asadmin="$payara_home/bin/asadmin"
  pw="$(mktemp)"
  trap 'rm -f "$pw"' EXIT
  "$asadmin" start-domain domain1 >/dev/null
  stop_payara() { "$asadmin" stop-domain domain1 >/dev/null 2>&1 || true; }
  trap 'stop_payara; rm -f "$pw"' EXIT
  existing="$("$asadmin" list-file-users 2>/dev/null || true)"
  if ! grep -qx 'admin1' <<<"$existing"; then
    printf 'AS_ADMIN_USERPASSWORD=%s\n' 'Adm1n!pass' > "$pw"
    "$asadmin" --passwordfile "$pw" create-file-user --groups syncular-admin admin1 >/dev/null
  fi
  if ! grep -qx 'plain1' <<<"$existing"; then
    printf 'AS_ADMIN_USERPASSWORD=%s\n' 'Pl41n!pass' > "$pw"
    "$asadmin" --passwordfile "$pw" create-file-user plain1 >/dev/null
  fi
fi
