import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { kapiNodeFlags, nodeFlagsOfShebang } from './node-flags.js';

const kapiBin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../bin/kapi');

test('the node flags of a shebang line: after node, flags only', () => {
  assert.deepEqual(nodeFlagsOfShebang('#!/usr/bin/env -S node --max-semi-space-size=64 --stack-size=900'), [
    '--max-semi-space-size=64',
    '--stack-size=900',
  ]);
  assert.deepEqual(nodeFlagsOfShebang('#!/usr/local/bin/node --max-semi-space-size=32'), ['--max-semi-space-size=32']);
  assert.deepEqual(nodeFlagsOfShebang('#!/usr/bin/env node'), []);
  assert.deepEqual(nodeFlagsOfShebang('#!/bin/sh -e'), []);
  assert.deepEqual(nodeFlagsOfShebang('// not a shebang --max-semi-space-size=64'), []);
  assert.deepEqual(kapiNodeFlags('/nonexistent/bin/kapi'), []);
});

test('bin/kapi runs itself with a 64 MiB young generation and no allocation-site pretenuring, and `node bin/kapi` launchers read the same flags', () => {
  const flags = kapiNodeFlags(kapiBin);
  assert.deepEqual(flags, ['--max-semi-space-size=64', '--no-allocation-site-pretenuring']);
  // the flag reaches V8: a young generation of 2 semi-spaces grows past node's default 32 MiB
  const probe =
    "const v8=require('v8');const keep=[];let max=0;for(let i=0;i<3e6;i++){keep.push({i});if(keep.length>2e5)keep.length=0;" +
    "if(i%1e4===0)max=Math.max(max,v8.getHeapSpaceStatistics().find(s=>s.space_name==='new_space').space_size)}console.log(max)";
  const grown = Number(spawnSync(process.execPath, [...flags, '-e', probe], { encoding: 'utf8' }).stdout.trim());
  assert.ok(grown > 32 * 1024 * 1024, `new space grew to ${grown} bytes`);
});

test('startedWithNodeFlag sees a flag on the command line or in NODE_OPTIONS, and its absence', () => {
  const moduleUrl = new URL('./node-flags.js', import.meta.url).href;
  const probe = `import(${JSON.stringify(moduleUrl)}).then((m) => console.log(m.startedWithNodeFlag('--max-semi-space-size')))`;
  const run = (args: string[], nodeOptions?: string) => {
    const env = { ...process.env };
    delete env.NODE_OPTIONS;
    if (nodeOptions !== undefined) env.NODE_OPTIONS = nodeOptions;
    return spawnSync(process.execPath, [...args, '-e', probe], { encoding: 'utf8', env }).stdout.trim();
  };
  assert.equal(run(['--max-semi-space-size=64']), 'true');
  assert.equal(run([], '--max-semi-space-size=32'), 'true');
  assert.equal(run([]), 'false');
  assert.equal(run(['--max-old-space-size=512']), 'false');
});

test("missingKapiNodeFlags names the flags of bin/kapi's first line that node was not started with", () => {
  const moduleUrl = new URL('./node-flags.js', import.meta.url).href;
  const probe = `import(${JSON.stringify(moduleUrl)}).then((m) => console.log(JSON.stringify(m.missingKapiNodeFlags())))`;
  const run = (args: string[]) => {
    const env = { ...process.env };
    delete env.NODE_OPTIONS;
    return JSON.parse(spawnSync(process.execPath, [...args, '-e', probe], { encoding: 'utf8', env }).stdout) as string[];
  };
  const flags = kapiNodeFlags(kapiBin);
  assert.deepEqual(run([]), flags);
  assert.deepEqual(run(flags), []);
  assert.deepEqual(run([flags[0]!]), flags.slice(1));
});
