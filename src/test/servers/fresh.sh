#!/usr/bin/env bash
# Before an integration run: stops a server left running by a killed earlier run (it would hold the ports the
# managed containers need), then deletes the unpacked servers so they are unpacked fresh, with no deployment of
# the killed run still registered in their configuration; and drops the previous run's failsafe summaries. Payara
# Micro nodes of the *MicroIT tests (started from this checkout's target/payara-micro.jar) outlive a failsafe JVM
# that was killed outright: they are stopped too.
set -uo pipefail
payara_home="$1"
wildfly_home="$2"
markers="$3"
reports="$4"
micro_jar="${5:-}"
if [ -x "$payara_home/bin/asadmin" ]; then
  "$payara_home/bin/asadmin" stop-domain domain1 >/dev/null 2>&1 || true
fi
if [ -x "$wildfly_home/bin/jboss-cli.sh" ]; then
  "$wildfly_home/bin/jboss-cli.sh" --controller=localhost:10090 --connect --command=shutdown >/dev/null 2>&1 || true
fi
if [ -n "$micro_jar" ]; then
  pkill -KILL -f -- "-jar $micro_jar " >/dev/null 2>&1 || true
fi
rm -rf "$payara_home" "$wildfly_home" "$markers"
# failsafe merges a new run into an existing summary file: start each run from none
rm -f "$reports"/failsafe-summary-*.xml
