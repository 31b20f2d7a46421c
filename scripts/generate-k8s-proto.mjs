#!/usr/bin/env node
// Generates server/protobuf/generated/k8s-proto.json: the compact descriptor behind the
// Kubernetes protobuf media type (application/vnd.kubernetes.protobuf).
//
// Inputs
//  1. the upstream generated.proto files of k8s.io/api and k8s.io/apimachinery
//     (default ../shared/k8s/proto beside the repository): messages, field numbers, wire types.
//  2. the Go type declarations of the same release (k8s.io/api and k8s.io/apimachinery at
//     tag v0.33.9, read from git mirrors with `git show`): the protobuf tags there name the
//     proto field number of every Go field, and the json tags give what the proto files cannot:
//     the JSON name (proto names follow Go field names: `Webhooks`, `uID`, `aPIGroup`), inline
//     embedding (`VolumeSource`, `ProbeHandler`, `LocalObjectReference`), and whether Go's JSON
//     encoding keeps a zero value (pointer fields and fields without `omitempty`) or drops it.
//     Go's protobuf encoding writes every non-pointer scalar, zero or not, so without this a
//     decoded body would carry `"nodeName": ""`, `"generation": 0`, ... that the same client
//     never sends as JSON.
//  3. server/apis/generated/schemas.json: which proto package serves which API group, and a
//     cross-check of the JSON names.
//
// Output shape (no comments, no options):
//  { "packages": { "<apiVersion>": "<proto package>" },
//    "wrappers": ["<message>", ...],        // Go named slices (`type Verbs []string`): JSON arrays
//    "messages": { "<message>": [[jsonName, number, type, flags], ...] } }   // Go field order
// Message names drop the leading `k8s.io.`. `type` is a scalar (string, bool, int32, int64,
// uint32, uint64, double, float, bytes), a message name, or [keyType, valueType] for a map.
// flags: 1 repeated, 2 map, 4 inline (fields spliced into the parent's JSON object),
//        8 keep zero (Go's JSON keeps a zero value: pointer or no omitempty).
//
// Usage: node scripts/generate-k8s-proto.mjs [--proto DIR] [--go-api GITDIR] [--go-apimachinery GITDIR] [--tag TAG]

import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import protobuf from 'protobufjs';
import { git, goSource, option, repoRoot, sharedPath } from './lib/go-source.mjs';

const protoDir = path.resolve(option('proto', sharedPath('k8s/proto')));
const goApi = option('go-api', goSource('kubernetes+api'));
const goApimachinery = option('go-apimachinery', goSource('kubernetes+apimachinery'));
const tag = option('tag', 'v0.33.9');
const outFile = path.join(repoRoot, 'server/protobuf/generated/k8s-proto.json');
const schemasFile = path.join(repoRoot, 'server/apis/generated/schemas.json');

const FLAG_REPEATED = 1;
const FLAG_MAP = 2;
const FLAG_INLINE = 4;
const FLAG_KEEP_ZERO = 8;

// ---------------------------------------------------------------- proto files

function protoFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) out.push(...protoFiles(p));
    else if (name === 'generated.proto') out.push(p);
  }
  return out;
}

const root = new protobuf.Root();
const files = protoFiles(protoDir).filter((f) => !f.includes('/testapigroup/'));
if (files.length === 0) throw new Error(`no generated.proto under ${protoDir}`);
for (const file of files) {
  protobuf.parse(readFileSync(file, 'utf8'), root, { keepCase: true, alternateCommentMode: true });
}
root.resolveAll();

const messages = [];
(function collect(ns) {
  for (const o of ns.nestedArray) {
    if (o instanceof protobuf.Type) messages.push(o);
    if (o.nestedArray) collect(o);
  }
})(root);

const bare = (fullName) => fullName.replace(/^\./, '').replace(/^k8s\.io\./, '');

// ---------------------------------------------------------------- Go declarations

/** proto package (without k8s.io.) -> [git dir, directory inside it] */
function goLocation(pkg) {
  if (pkg.startsWith('api.')) return [goApi, pkg.slice('api.'.length).replaceAll('.', '/')];
  if (pkg.startsWith('apimachinery.')) return [goApimachinery, pkg.slice('apimachinery.'.length).replaceAll('.', '/')];
  throw new Error(`no Go location for package ${pkg}`);
}

/** Go struct fields with a protobuf tag, per struct name, in declaration order; and the names
 *  of named slice types */
function readGoPackage(gitDir, dir) {
  const names = git(gitDir, 'ls-tree', '--name-only', `${tag}:${dir}`)
    .split('\n')
    .filter((n) => n.endsWith('.go') && !n.endsWith('_test.go') && !n.startsWith('zz_generated') && n !== 'generated.pb.go');
  const structs = new Map();
  const sliceTypes = new Set();
  for (const name of names) {
    const text = git(gitDir, 'show', `${tag}:${dir}/${name}`);
    for (const m of text.matchAll(/^type\s+(\w+)\s+\[\]/gm)) sliceTypes.add(m[1]);
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
        const field = parseGoField(line);
        if (field) fields.push(field);
      }
      i--;
      structs.set(head[1], fields);
    }
  }
  return { structs, sliceTypes };
}

function parseGoField(line) {
  const tick = line.indexOf('`');
  if (tick < 0) return undefined;
  const decl = line.slice(0, tick).trim().split(/\s+/);
  const tags = line.slice(tick + 1, line.lastIndexOf('`'));
  const pb = /protobuf:"([^"]*)"/.exec(tags);
  if (!pb) return undefined;
  const number = Number(pb[1].split(',')[1]);
  const json = /json:"([^"]*)"/.exec(tags);
  const [jsonName, ...jsonOpts] = json ? json[1].split(',') : [''];
  const embedded = decl.length === 1;
  const goType = embedded ? decl[0] : decl.slice(1).join(' ');
  const goName = embedded ? goType.replace(/^\*/, '').replace(/^\w+\./, '') : decl[0];
  return {
    number,
    goName,
    pointer: goType.startsWith('*'),
    jsonName: jsonName === '' ? undefined : jsonName,
    omitempty: jsonOpts.includes('omitempty'),
    inline: jsonOpts.includes('inline') || (embedded && jsonName === '' && json !== null),
    noJSON: jsonName === '-',
  };
}

const goPackages = new Map();
function goPackage(pkg) {
  let p = goPackages.get(pkg);
  if (!p) {
    const [gitDir, dir] = goLocation(pkg);
    p = readGoPackage(gitDir, dir);
    goPackages.set(pkg, p);
  }
  return p;
}

// ---------------------------------------------------------------- schemas.json

const schemas = JSON.parse(readFileSync(schemasFile, 'utf8'));
const definitionFor = (message) => schemas[`io.k8s.${message.replace(/^(api|apimachinery)\./, '$1.')}`];

// ---------------------------------------------------------------- descriptor

const warnings = [];
// Go types that marshal themselves (their proto fields have no Go field behind them); the codec
// knows them by name
const customEncoded = new Set([
  'apimachinery.pkg.api.resource.Quantity',
  'apimachinery.pkg.api.resource.QuantityValue',
  'apimachinery.pkg.apis.meta.v1.Time',
  'apimachinery.pkg.apis.meta.v1.MicroTime',
]);
const out = { packages: {}, wrappers: [], messages: {} };

function typeOf(field) {
  if (field.map) {
    const value = field.resolvedType ? bare(field.resolvedType.fullName) : field.type;
    return [field.keyType, value];
  }
  return field.resolvedType ? bare(field.resolvedType.fullName) : field.type;
}

for (const type of messages) {
  const name = bare(type.fullName);
  const pkg = name.slice(0, name.lastIndexOf('.'));
  const { structs, sliceTypes } = goPackage(pkg);
  if (sliceTypes.has(type.name) && type.fieldsArray.length === 1 && type.fieldsArray[0].name === 'items') {
    out.wrappers.push(name);
  }
  const goFields = structs.get(type.name);
  const byNumber = new Map((goFields ?? []).map((f) => [f.number, f]));
  const props = definitionFor(name)?.p;
  // Go declaration order where known (Go's JSON order), then any proto-only field
  const order = goFields
    ? [
        ...goFields.map((g) => type.fieldsArray.find((f) => f.id === g.number)).filter(Boolean),
        ...type.fieldsArray.filter((f) => !byNumber.has(f.id)),
      ]
    : type.fieldsArray;
  const fields = [];
  for (const field of order) {
    const go = byNumber.get(field.id);
    if (!go && goFields && !customEncoded.has(name)) warnings.push(`${name}.${field.name} (${field.id}): no Go field`);
    const inline = go?.inline ?? false;
    const jsonName = go?.jsonName ?? field.name;
    let flags = 0;
    if (field.map) flags |= FLAG_MAP;
    else if (field.repeated) flags |= FLAG_REPEATED;
    if (inline) flags |= FLAG_INLINE;
    if (!go || go.pointer || !go.omitempty) flags |= FLAG_KEEP_ZERO;
    if (props && !inline && !go?.noJSON && !Object.hasOwn(props, jsonName)) {
      warnings.push(`${name}.${jsonName}: not a property of the OpenAPI definition`);
    }
    fields.push([jsonName, field.id, typeOf(field), flags]);
  }
  out.messages[name] = fields;
}

// apiVersion -> proto package, from the group-version-kinds the OpenAPI definitions carry
const groupOfDir = new Map();
for (const [defName, def] of Object.entries(schemas)) {
  const m = /^io\.k8s\.api\.(\w+)\.(\w+)\.\w+$/.exec(defName);
  if (!m || def.gvk?.length !== 1) continue;
  const [{ group, version }] = def.gvk;
  if (version !== m[2]) continue;
  groupOfDir.set(m[1], group);
}
// groups of which no version is in the OpenAPI document of 1.33
const unservedGroups = {
  admission: 'admission.k8s.io',
  apidiscovery: 'apidiscovery.k8s.io',
  extensions: 'extensions',
  imagepolicy: 'imagepolicy.k8s.io',
};
const packageNames = [...new Set(Object.keys(out.messages).map((n) => n.slice(0, n.lastIndexOf('.'))))].sort();
for (const pkg of packageNames) {
  const m = /^api\.(\w+)\.(\w+)$/.exec(pkg);
  if (!m) continue;
  const group = groupOfDir.get(m[1]) ?? unservedGroups[m[1]];
  if (group === undefined) throw new Error(`no API group known for proto package ${pkg}`);
  out.packages[group === '' ? m[2] : `${group}/${m[2]}`] = pkg;
}
out.wrappers.sort();

mkdirSync(path.dirname(outFile), { recursive: true });
writeFileSync(outFile, JSON.stringify(out) + '\n');
for (const w of warnings) console.warn(`warning: ${w}`);
console.log(
  `wrote ${path.relative(repoRoot, outFile)}: ${Object.keys(out.messages).length} messages, ` +
    `${Object.keys(out.packages).length} group versions, ${out.wrappers.length} slice wrappers`,
);
