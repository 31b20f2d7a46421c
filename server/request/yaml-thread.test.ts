import assert from 'node:assert/strict';
import { test } from 'node:test';
import { StatusError } from '../machinery/status.js';
import { decodeYamlBuffer, decodeYamlText } from './yaml.js';
import { decodeYamlOffThread } from './yaml-thread.js';

/** a ConfigMap of `count` keys in descending order, one of them repeated */
function bigYaml(count: number): Buffer {
  const keys = Array.from({ length: count }, (_v, i) => `  key${String(count - i).padStart(6, '0')}: v${i}`);
  return Buffer.from(
    ['apiVersion: v1', 'kind: ConfigMap', 'metadata:', '  name: big', 'data:', ...keys, '  key000007: again', ''].join('\n'),
  );
}

test('a body decoded on the YAML thread is what the decoder makes of it, handed out once', async () => {
  const body = bigYaml(2000);
  await decodeYamlOffThread(body);
  const first = decodeYamlBuffer(body);
  const own = decodeYamlText(body.toString('utf8'));
  assert.deepEqual(first, own);
  assert.match(first.duplicateKeys ?? '', /line 2006: key "key000007" already set in map/);
  // the kept value was the first caller's; a second decoding is a value of its own
  (first.value as { data: Record<string, string> }).data.key000001 = 'changed';
  assert.equal((decodeYamlBuffer(body).value as { data: Record<string, string> }).data.key000001, 'v1999');
});

test("a body the decoder refuses gets the decoder's own 400 from the thread", async () => {
  const body = Buffer.concat([bigYaml(500), Buffer.from('  broken: [1,\n')]);
  await decodeYamlOffThread(body);
  let own: unknown;
  try {
    decodeYamlText(body.toString('utf8'));
  } catch (err) {
    own = err;
  }
  assert.ok(own instanceof StatusError);
  assert.throws(
    () => decodeYamlBuffer(body),
    (e: unknown) => e instanceof StatusError && e.code === 400 && e.message === (own as StatusError).message,
  );
});

test('the event loop keeps turning while the thread decodes a large body', async () => {
  const body = bigYaml(60_000);
  let turns = 0;
  let decoding = true;
  const spin = (): void => {
    turns++;
    if (decoding) setImmediate(spin);
  };
  setImmediate(spin);
  await decodeYamlOffThread(body);
  decoding = false;
  // decoded on the event loop, the parse would have been one turn
  assert.ok(turns > 10, `${turns} turns of the event loop while the thread decoded`);
  assert.equal(Object.keys((decodeYamlBuffer(body).value as { data: object }).data).length, 60_000);
});

test('bodies wait their turn; one whose request ends while it waits leaves the queue', async () => {
  const bodies = [bigYaml(20_000), bigYaml(300), bigYaml(400)];
  const gone = new AbortController();
  const outcomes = bodies.map((b, i) =>
    decodeYamlOffThread(b, i === 1 ? gone.signal : undefined).then(
      () => 'decoded',
      (e: Error) => e.message,
    ),
  );
  gone.abort(new Error('client went away'));
  assert.deepEqual(await Promise.all(outcomes), ['decoded', 'client went away', 'decoded']);
  assert.equal(Object.keys((decodeYamlBuffer(bodies[2]).value as { data: object }).data).length, 400);
});
