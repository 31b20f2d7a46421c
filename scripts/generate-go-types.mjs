#!/usr/bin/env node
// Generates server/apis/generated/go-types.json: the Go type names that kube-apiserver's JSON
// decoder prints in its type errors ("json: cannot unmarshal string into Go struct field
// ContainerPort.spec.containers.ports.protocol of type v1.Protocol"), where they differ from
// what the OpenAPI schema alone suggests. The schema says `protocol` is a string; the Go field
// is of the named type `Protocol` of package `v1`.
//
// Inputs
//  1. server/apis/generated/schemas.json (which definitions and JSON fields exist)
//  2. the Go type declarations of the same release (k8s.io/api, k8s.io/apimachinery,
//     k8s.io/apiextensions-apiserver, k8s.io/kube-aggregator at --tag, read from git mirrors
//     with `git show`).
//
// Output shape:
//  { "fields": { "<definition>": { "<json field>": "<Go type>" } },  // only where the Go type
//                                                                   // differs from the derived one
//    "named": { "<Go type>": "<underlying Go type>" } }             // named slices and maps
// Go types are written as reflect's Type.String() prints them, without a leading pointer
// (the decoder reports the pointed-to type): `v1.Protocol`, `[]v1.Capability`,
// `map[v1.ResourceName]resource.Quantity`, `[]uint8`.
//
// The derived type (what the runtime assumes without an entry): string/bool/int32/int64/
// float64 from type+format, `[]uint8` for format byte, `[]<elem>` for arrays,
// `map[string]<elem>` for additionalProperties, `<pkg>.<Name>` for a reference.
//
// Usage: node scripts/generate-go-types.mjs [--tag TAG] [--go-api DIR] [--go-apimachinery DIR]
//        [--go-apiextensions DIR] [--go-aggregator DIR]

import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { git, goImports, goSource, option, repoRoot } from './lib/go-source.mjs';

const tag = option('tag', 'v0.33.9');
const mirrors = {
  api: option('go-api', goSource('kubernetes+api')),
  apimachinery: option('go-apimachinery', goSource('kubernetes+apimachinery')),
  apiextensions: option('go-apiextensions', goSource('kubernetes+apiextensions-apiserver')),
  aggregator: option('go-aggregator', goSource('kubernetes+kube-aggregator')),
};
const schemasFile = path.join(repoRoot, 'server/apis/generated/schemas.json');
const outFile = path.join(repoRoot, 'server/apis/generated/go-types.json');

/** definition prefix (without the type name) -> [git dir, directory, Go import path] */
function goLocation(prefix) {
  const rest = (p) => prefix.slice(p.length).replaceAll('.', '/');
  if (prefix.startsWith('io.k8s.api.')) return [mirrors.api, rest('io.k8s.api.'), `k8s.io/api/${rest('io.k8s.api.')}`];
  if (prefix.startsWith('io.k8s.apimachinery.')) {
    return [mirrors.apimachinery, rest('io.k8s.apimachinery.'), `k8s.io/apimachinery/${rest('io.k8s.apimachinery.')}`];
  }
  if (prefix.startsWith('io.k8s.apiextensions-apiserver.')) {
    return [
      mirrors.apiextensions,
      rest('io.k8s.apiextensions-apiserver.'),
      `k8s.io/apiextensions-apiserver/${rest('io.k8s.apiextensions-apiserver.')}`,
    ];
  }
  if (prefix.startsWith('io.k8s.kube-aggregator.')) {
    return [mirrors.aggregator, rest('io.k8s.kube-aggregator.'), `k8s.io/kube-aggregator/${rest('io.k8s.kube-aggregator.')}`];
  }
  return undefined;
}

const lastElement = (importPath) => importPath.slice(importPath.lastIndexOf('/') + 1);

const GO_BUILTIN = new Set([
  'string',
  'bool',
  'int',
  'int8',
  'int16',
  'int32',
  'int64',
  'uint',
  'uint8',
  'uint16',
  'uint32',
  'uint64',
  'float32',
  'float64',
  'byte',
  'rune',
  'interface{}',
  'any',
]);

/** a Go type expression as reflect prints it (local names qualified with `pkg`) */
function qualify(expr, pkg, importsOf) {
  expr = expr.trim();
  if (expr.startsWith('*')) return '*' + qualify(expr.slice(1), pkg, importsOf);
  if (expr.startsWith('[]')) {
    const elem = qualify(expr.slice(2), pkg, importsOf);
    return elem === 'byte' || elem === 'uint8' ? '[]uint8' : `[]${elem}`;
  }
  if (expr.startsWith('map[')) {
    let depth = 0;
    let i = 3;
    for (; i < expr.length; i++) {
      if (expr[i] === '[') depth++;
      else if (expr[i] === ']' && --depth === 0) break;
    }
    return `map[${qualify(expr.slice(4, i), pkg, importsOf)}]${qualify(expr.slice(i + 1), pkg, importsOf)}`;
  }
  if (GO_BUILTIN.has(expr))
    return expr === 'byte' ? 'uint8' : expr === 'any' ? 'interface {}' : expr === 'interface{}' ? 'interface {}' : expr;
  const dot = expr.indexOf('.');
  if (dot > 0) return `${lastElement(importsOf.get(expr.slice(0, dot)) ?? expr.slice(0, dot))}.${expr.slice(dot + 1)}`;
  return `${pkg}.${expr}`;
}

/** struct fields and named types of one Go package */
function readGoPackage(gitDir, dir, importPath) {
  const pkg = lastElement(importPath);
  const names = git(gitDir, 'ls-tree', '--name-only', `${tag}:${dir}`)
    .split('\n')
    .filter((n) => n.endsWith('.go') && !n.endsWith('_test.go') && !n.startsWith('zz_generated') && !n.endsWith('.pb.go'));
  const structs = new Map();
  const named = new Map();
  for (const name of names) {
    const text = git(gitDir, 'show', `${tag}:${dir}/${name}`);
    const importsOf = goImports(text);
    for (const m of text.matchAll(/^type\s+(\w+)\s+((?:\[\]|map\[)[^\n{]*?)\s*(?:\/\/.*)?$/gm)) {
      named.set(`${pkg}.${m[1]}`, qualify(m[2], pkg, importsOf));
    }
    for (const m of text.matchAll(/^type\s+(\w+)\s+(string|bool|int32|int64|float64)\s*$/gm)) {
      named.set(`${pkg}.${m[1]}`, m[2]);
    }
    for (const m of text.matchAll(/^type\s+(\w+)\s*=?\s*(\w+)\.(\w+)\s*$/gm)) {
      const from = importsOf.get(m[2]);
      if (from) structs.set(m[1], { alias: [from, m[3]], importPath });
    }
    const lines = text.split('\n');
    for (let i = 0; i < lines.length; i++) {
      const head = /^type\s+(\w+)\s+struct\s*\{\s*$/.exec(lines[i]);
      if (!head) continue;
      const fields = [];
      let depth = 1;
      for (i++; i < lines.length && depth > 0; i++) {
        const line = lines[i].trim();
        if (line.startsWith('//') || line === '') continue;
        if (line.endsWith('{')) depth++;
        if (line === '}' || line.startsWith('}')) {
          depth--;
          continue;
        }
        if (depth !== 1) continue;
        const tick = line.indexOf('`');
        const declText = (tick < 0 ? line.replace(/\/\/.*$/, '') : line.slice(0, tick)).trim();
        const decl = declText.split(/\s+/);
        const tags = tick < 0 ? '' : line.slice(tick + 1, line.lastIndexOf('`'));
        const json = /json:"([^"]*)"/.exec(tags);
        const [jsonName, ...jsonOpts] = json ? json[1].split(',') : [''];
        if (jsonName === '-') continue;
        const embedded = decl.length === 1;
        const goType = embedded ? decl[0] : decl.slice(1).join(' ');
        if (embedded && (jsonName === '' || jsonOpts.includes('inline'))) {
          const bare = goType.replace(/^\*/, '');
          const dot = bare.indexOf('.');
          fields.push(dot > 0 ? { inline: [importsOf.get(bare.slice(0, dot)), bare.slice(dot + 1)] } : { inline: [importPath, bare] });
          continue;
        }
        fields.push({
          json: jsonName || (embedded ? goType.replace(/^\*/, '').replace(/^\w+\./, '') : decl[0]),
          type: qualify(goType, pkg, importsOf),
        });
      }
      i--;
      structs.set(head[1], { fields, importPath });
    }
  }
  return { structs, named };
}

const schemas = JSON.parse(readFileSync(schemasFile, 'utf8'));
const packages = new Map();
const allNamed = new Map();
/** [git dir, directory] of a Go import path */
function sourceOf(importPath) {
  if (!importPath) return undefined;
  for (const [prefix, gitDir] of [
    ['k8s.io/api/', mirrors.api],
    ['k8s.io/apimachinery/', mirrors.apimachinery],
    ['k8s.io/apiextensions-apiserver/', mirrors.apiextensions],
    ['k8s.io/kube-aggregator/', mirrors.aggregator],
  ]) {
    if (importPath.startsWith(prefix)) return [gitDir, importPath.slice(prefix.length)];
  }
  return undefined;
}
function packageAt(importPath) {
  let p = packages.get(importPath);
  if (!p) {
    const src = sourceOf(importPath);
    if (!src) return undefined;
    p = readGoPackage(src[0], src[1], importPath);
    packages.set(importPath, p);
    for (const [k, v] of p.named) allNamed.set(k, v);
  }
  return p;
}

/** JSON field -> Go type of a struct, inline embeddings flattened (across packages) */
function flatFields(importPath, structName, out = new Map()) {
  const s = packageAt(importPath)?.structs.get(structName);
  if (!s) return out;
  if (s.alias) return flatFields(s.alias[0], s.alias[1], out);
  for (const f of s.fields) {
    if (f.inline) flatFields(f.inline[0], f.inline[1], out);
    else if (!out.has(f.json)) out.set(f.json, f.type.replace(/^\*/, ''));
  }
  return out;
}

const pkgOfDefinition = (name) => {
  const prefix = name.slice(0, name.lastIndexOf('.'));
  return lastElement(prefix.replaceAll('.', '/'));
};

/** the Go type the runtime derives from a schema node (keep in step with field-validation-plan.ts) */
function derived(node) {
  if (node.ref !== undefined) return `${pkgOfDefinition(node.ref)}.${node.ref.slice(node.ref.lastIndexOf('.') + 1)}`;
  switch (node.t) {
    case 'string':
      return node.f === 'byte' ? '[]uint8' : 'string';
    case 'boolean':
      return 'bool';
    case 'integer':
      return node.f === 'int32' ? 'int32' : 'int64';
    case 'number':
      return 'float64';
    case 'array':
      return `[]${node.i ? derived(node.i) : 'interface {}'}`;
    case 'object':
      if (node.ap && typeof node.ap === 'object') return `map[string]${derived(node.ap)}`;
      return 'map[string]interface {}';
    default:
      return 'interface {}';
  }
}

const fields = {};
const usedNamed = new Set();
const missing = [];
const noteNamed = (t) => {
  for (const m of t.matchAll(/[\w]+\.[\w]+/g)) if (allNamed.has(m[0])) usedNamed.add(m[0]);
};
for (const [name, def] of Object.entries(schemas)) {
  if (!def.p) continue;
  const prefix = name.slice(0, name.lastIndexOf('.'));
  const loc = goLocation(prefix);
  if (!loc) continue;
  const flat = flatFields(loc[2], name.slice(name.lastIndexOf('.') + 1));
  if (flat.size === 0) {
    missing.push(name);
    continue;
  }
  for (const [jsonName, node] of Object.entries(def.p)) {
    const goType = flat.get(jsonName);
    if (goType === undefined) {
      missing.push(`${name}.${jsonName}`);
      continue;
    }
    noteNamed(goType);
    if (goType !== derived(node)) (fields[name] ??= {})[jsonName] = goType;
  }
}
// named types reachable from the named ones (a named map of named values)
for (const n of [...usedNamed]) noteNamed(allNamed.get(n));
const named = {};
for (const n of [...usedNamed].sort()) {
  const u = allNamed.get(n);
  if (u.startsWith('[]') || u.startsWith('map[')) named[n] = u;
}

writeFileSync(outFile, JSON.stringify({ fields, named }) + '\n');
const count = Object.values(fields).reduce((a, f) => a + Object.keys(f).length, 0);
console.log(`${outFile}: ${count} fields in ${Object.keys(fields).length} definitions, ${Object.keys(named).length} named composites`);
if (missing.length) console.log(`not found in Go sources (derived types apply): ${missing.join(', ')}`);
