#!/usr/bin/env bash
# Prepares the unpacked servers for the integration tests (run by Maven in pre-integration-test):
# stops a domain left running by a killed earlier run, and creates the application users the admin tests use.
# Idempotent: a second run changes nothing.
set -euo pipefail
payara_home="$1"
wildfly_home="$2"

# A stale domain1 makes the managed Payara container refuse to start.
if [ -x "$payara_home/bin/asadmin" ]; then
  "$payara_home/bin/asadmin" stop-domain domain1 >/dev/null 2>&1 || true
fi
# A stale WildFly (management port 10090 with our offset) makes the managed WildFly container refuse to start.
if [ -x "$wildfly_home/bin/jboss-cli.sh" ]; then
  "$wildfly_home/bin/jboss-cli.sh" --controller=localhost:10090 --connect --command=shutdown >/dev/null 2>&1 || true
fi

# WildFly application-realm users: admin1 holds the syncular-admin role, plain1 does not.
if [ -x "$wildfly_home/bin/add-user.sh" ]; then
  cfg="$wildfly_home/standalone/configuration"
  "$wildfly_home/bin/add-user.sh" -a -u admin1 -p 'Adm1n!pass' -g syncular-admin -sc "$cfg" >/dev/null
  "$wildfly_home/bin/add-user.sh" -a -u plain1 -p 'Pl41n!pass' -sc "$cfg" >/dev/null
fi
