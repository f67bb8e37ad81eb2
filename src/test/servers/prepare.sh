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
