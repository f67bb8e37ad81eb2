#!/usr/bin/env bash
# Prepares the freshly unpacked servers for the integration tests (run by Maven in pre-integration-test):
# creates the application users the admin tests use. Idempotent: a second run changes nothing.
set -euo pipefail
payara_home="$1"
wildfly_home="$2"

# WildFly application-realm users: admin1 holds the syncular-admin role, plain1 does not.
if [ -x "$wildfly_home/bin/add-user.sh" ]; then
  cfg="$wildfly_home/standalone/configuration"
  "$wildfly_home/bin/add-user.sh" -a -u admin1 -p 'Adm1n!pass' -g syncular-admin -sc "$cfg" >/dev/null
  "$wildfly_home/bin/add-user.sh" -a -u plain1 -p 'Pl41n!pass' -sc "$cfg" >/dev/null
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
