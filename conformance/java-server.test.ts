/**
 * The upstream conformance catalog (release 0.15.48) against Syncular for Jakarta EE, black-box: the reference TS
 * client and codec drivers paired with our HTTP server driver. One test per scenario. Our own file; run.sh copies
 * it into an upstream checkout's packages/conformance/test/ at run time.
 */
import { describe, expect, test } from 'bun:test';
import { CATALOG, type Pairing, referenceCodecDriver, runScenario, tsClientDriver } from '../src';
import { httpServerDriver } from './http-server-driver';

const pairing: Pairing = { server: httpServerDriver, client: tsClientDriver, codec: referenceCodecDriver };
const only = process.env.SYNCULAR_SCENARIOS?.split(',');

describe(`conformance: ts-web-client × ${httpServerDriver.name}`, () => {
  for (const scenario of CATALOG) {
    if (only !== undefined && !only.some((prefix) => scenario.name.startsWith(prefix))) continue;
    const missing = (scenario.requires ?? []).filter((c) => !httpServerDriver.capabilities.includes(c));
    // Capability-gated scenarios the server does not offer are reported as skipped, never as passed.
    const declare = missing.length > 0 ? test.skip : test;
    declare(`${scenario.name} (${scenario.specRefs.join(' ')})`, async () => {
      const result = await runScenario(scenario, pairing);
      if (result.status === 'skipped') return;
      expect(result.error ?? 'none').toBe('none');
      expect(result.status).toBe('pass');
    }, 60_000);
  }
});
