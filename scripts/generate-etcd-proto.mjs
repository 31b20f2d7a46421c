#!/usr/bin/env node
// Generates storage/etcd/generated/etcd-proto.json: a minimal protobufjs JSON descriptor of
// the part of etcd's v3 API that kapi's own client speaks. The input is etcd's upstream
// rpc.proto / kv.proto / auth.proto (default: ../shared/etcd/proto beside the repository, or the first
// argument). Only the services and methods listed below survive, together with every message
// and enum they reach; comments and options are dropped. Field names are protobufjs'
// camelCase form of the upstream names; field numbers, types and enum names/values are
// upstream's, untouched. The runtime loads only the JSON (CI has no access to the .proto).

import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '..');
const protoRoot = path.resolve(process.argv[2] ?? path.join(repoRoot, '..', 'shared', 'etcd', 'proto'));
const outFile = path.join(repoRoot, 'storage/etcd/generated/etcd-proto.json');

/** the RPCs the client calls, per service */
const wanted = {
  'etcdserverpb.KV': ['Range', 'Put', 'DeleteRange', 'Txn', 'Compact'],
  'etcdserverpb.Watch': ['Watch'],
  'etcdserverpb.Lease': ['LeaseGrant', 'LeaseRevoke', 'LeaseKeepAlive'],
  'etcdserverpb.Cluster': ['MemberList'],
  'etcdserverpb.Maintenance': ['Status'],
};

/** upstream import path -> file under protoRoot */
const files = {
  'etcd/api/etcdserverpb/rpc.proto': 'api/etcdserverpb/rpc.proto',
  'etcd/api/mvccpb/kv.proto': 'api/mvccpb/kv.proto',
  'etcd/api/authpb/auth.proto': 'api/authpb/auth.proto',
};

// gogoproto and google.api annotations only steer Go code generation and the HTTP gateway;
// their imports are removed and their options, which protobufjs parses without resolving,
// are dropped from the output below.
function stripForeignImports(text) {
  return text.replace(/^import\s+"(gogoproto|google)\/[^"]+";\s*$/gm, '');
}

const root = new protobuf.Root();
for (const [importPath, rel] of Object.entries(files)) {
  const text = stripForeignImports(readFileSync(path.join(protoRoot, rel), 'utf8'));
  protobuf.parse(text, root, { keepCase: false, alternateCommentMode: false, filename: importPath });
}
root.resolveAll();

/** full names ('etcdserverpb.RangeRequest') of every message and enum the wanted RPCs reach */
const needed = new Set();
function reach(type) {
  const name = type.fullName.replace(/^\./, '');
  if (needed.has(name)) return;
  needed.add(name);
  if (type instanceof protobuf.Type) {
    for (const field of type.fieldsArray) {
      if (field.resolvedType) reach(field.resolvedType);
    }
  }
}

const services = {};
for (const [serviceName, methods] of Object.entries(wanted)) {
  const service = root.lookupService(serviceName);
  const out = {};
  for (const m of methods) {
    const method = service.methods[m];
    if (!method) throw new Error(`${serviceName}.${m} not found in ${protoRoot}`);
    method.resolve();
    reach(method.resolvedRequestType);
    reach(method.resolvedResponseType);
    out[m] = {
      requestType: method.resolvedRequestType.fullName.replace(/^\./, ''),
      responseType: method.resolvedResponseType.fullName.replace(/^\./, ''),
      ...(method.requestStream ? { requestStream: true } : {}),
      ...(method.responseStream ? { responseStream: true } : {}),
    };
  }
  services[serviceName] = { methods: out };
}

function fieldJSON(field) {
  const resolved = field.resolvedType;
  return {
    ...(field.repeated ? { rule: 'repeated' } : {}),
    // fully qualified, so that the descriptor does not depend on lookup scopes
    type: resolved ? resolved.fullName.replace(/^\./, '') : field.type,
    id: field.id,
  };
}

function typeJSON(type) {
  if (type instanceof protobuf.Enum) return { values: { ...type.values } };
  const fields = {};
  for (const field of type.fieldsArray) fields[field.name] = fieldJSON(field);
  const json = { fields };
  const oneofs = {};
  for (const oneof of type.oneofsArray) {
    // proto3 `optional` creates synthetic oneofs; etcd's protos have none, real ones only
    oneofs[oneof.name] = { oneof: oneof.fieldsArray.map((f) => f.name) };
  }
  if (Object.keys(oneofs).length > 0) json.oneofs = oneofs;
  return json;
}

// Rebuild the namespace tree with only what is needed; nested types stay nested.
const tree = { nested: {} };
function place(fullName, json) {
  let node = tree;
  for (const part of fullName.split('.')) {
    node.nested ??= {};
    node = node.nested[part] ??= {};
  }
  Object.assign(node, json);
}
// parents before children, so that a nested type lands inside its already placed parent
const ordered = [...needed].sort((a, b) => a.split('.').length - b.split('.').length || a.localeCompare(b));
for (const name of ordered) place(name, typeJSON(root.lookup(name)));
for (const [name, json] of Object.entries(services)) place(name, json);

mkdirSync(path.dirname(outFile), { recursive: true });
writeFileSync(outFile, JSON.stringify(tree) + '\n');
console.log(`wrote ${path.relative(repoRoot, outFile)}: ${needed.size} types, ${Object.keys(services).length} services`);
