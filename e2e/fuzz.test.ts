// Issue 8: generated hostile input (bodies of every media type, patches of every type,
// queries, paths, headers, framing, credentials, bodies of tens of thousands of members) over
// HTTP/1.1 and HTTP/2 against a real replica with RBAC. Every answer is a 2xx or kube's 4xx
// Status, within the request timeout; the replica stays alive, ready and under its memory
// bound; no object changes that a request did not name.
//
// KAPI_FUZZ_SECONDS (default 60) sets the fuzzing time, KAPI_FUZZ_SEED replays a run,
// KAPI_FUZZ_CASE=n[,m...] replays single cases of that seed, KAPI_FUZZ_SKIP=kind[,kind]
// leaves out input kinds (parts of a case's kind such as 'patch.json.copy' or 'yaml.deep') in a local run.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatFailures, runCampaign } from './fuzz/campaign.js';
import { seedFromEnv } from './fuzz/prng.js';

/** RSS a replica may reach under fuzz: a few times its idle size, far below what a leak or an amplification reaches */
const MAX_RSS_MIB = 1024;

function listFromEnv(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

describe('fuzz: hostile input keeps a replica harmless', () => {
  it('every generated request gets a 2xx or a kube 4xx Status, and the replica stays well', { timeout: 15 * 60_000 }, async (t) => {
    const seed = seedFromEnv(process.env.KAPI_FUZZ_SEED);
    const seconds = Number(process.env.KAPI_FUZZ_SECONDS ?? 60);
    const only = listFromEnv(process.env.KAPI_FUZZ_CASE).map(Number);
    t.diagnostic(`fuzz seed ${seed} (replay: KAPI_FUZZ_SEED=${seed}), ${seconds} s`);
    console.log(`fuzz: seed ${seed}, ${seconds} s (replay with KAPI_FUZZ_SEED=${seed})`);
    const result = await runCampaign({
      seed,
      seconds,
      only: only.length ? only : undefined,
      skip: listFromEnv(process.env.KAPI_FUZZ_SKIP),
      maxRssMiB: MAX_RSS_MIB,
      log: (line) => console.log(line),
    });
    t.diagnostic(`fuzz: ${result.cases} cases, peak RSS ${Math.round(result.peakRssMiB)} MiB`);
    assert.ok(result.cases > 0, 'the campaign ran no case');
    assert.equal(result.failures.length, 0, formatFailures(result));
  });
});
