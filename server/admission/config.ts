// Which admission plugins run (--enable-admission-plugins, --disable-admission-plugins, the
// deprecated --admission-control) and what each is configured with
// (--admission-control-config-file, an AdmissionConfiguration). Mistakes are start-up errors
// with kube-apiserver's messages.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseConfigYaml } from '../request/yaml.js';
import { ALL_ORDERED_PLUGINS, DEFAULT_ON_PLUGINS } from './order.js';

export interface AdmissionFlags {
  enable: readonly string[];
  disable: readonly string[];
  /** the deprecated --admission-control: exactly these plugins, nothing else */
  admissionControl: readonly string[];
}

/** Every error kube-apiserver's option validation would print for these flags. */
export function validateAdmissionFlags(flags: AdmissionFlags, registered: Iterable<string> = ALL_ORDERED_PLUGINS): string[] {
  const known = new Set(registered);
  const errs: string[] = [];
  if (flags.admissionControl.length > 0 && (flags.enable.length > 0 || flags.disable.length > 0)) {
    errs.push('admission-control and enable-admission-plugins/disable-admission-plugins flags are mutually exclusive');
  }
  for (const name of flags.admissionControl) if (!known.has(name)) errs.push(`admission-control plugin "${name}" is unknown`);
  for (const name of flags.enable) if (!known.has(name)) errs.push(`enable-admission-plugins plugin "${name}" is unknown`);
  for (const name of flags.disable) if (!known.has(name)) errs.push(`disable-admission-plugins plugin "${name}" is unknown`);
  const disabled = new Set(flags.disable);
  const both = [...new Set(flags.enable.filter((n) => disabled.has(n)))].sort();
  if (both.length > 0) errs.push(`[${both.join(' ')}] in enable-admission-plugins and disable-admission-plugins overlapped`);
  return errs;
}

/** The plugins that run, in kube's order. --admission-control replaces the default set;
 *  otherwise the defaults, plus --enable, minus --disable. */
export function enabledPluginNames(flags: AdmissionFlags): string[] {
  let on: Set<string>;
  if (flags.admissionControl.length > 0) {
    on = new Set(flags.admissionControl);
  } else {
    on = new Set(DEFAULT_ON_PLUGINS);
    for (const n of flags.disable) on.delete(n);
    for (const n of flags.enable) on.add(n);
  }
  return ALL_ORDERED_PLUGINS.filter((n) => on.has(n));
}

/** names the operator asked for by name (not just left on by default) */
export function explicitlyEnabled(flags: AdmissionFlags): Set<string> {
  return new Set(flags.admissionControl.length > 0 ? flags.admissionControl : flags.enable);
}

const CONFIG_GROUP_VERSIONS = new Set(['apiserver.config.k8s.io/v1', 'apiserver.k8s.io/v1alpha1']);

/**
 * Reads an AdmissionConfiguration: plugin name -> its configuration (the embedded
 * `configuration`, or the parsed file at `path`, relative to the configuration file). Throws
 * with kube's `failed to read plugin config: ...` prefix.
 */
export function readAdmissionConfigFile(file: string): Map<string, unknown> {
  const out = new Map<string, unknown>();
  if (!file) return out;
  const fail = (why: string): never => {
    throw new Error(`failed to read plugin config: ${why}`);
  };
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    return fail(`unable to read admission control configuration from "${file}" [${(err as Error).message}]`);
  }
  let doc: unknown;
  try {
    doc = parseConfigYaml(text);
  } catch (err) {
    return fail(`unable to decode admission control configuration from "${file}": ${(err as Error).message}`);
  }
  const obj = (doc ?? {}) as Record<string, unknown>;
  if (obj.kind !== 'AdmissionConfiguration' || !CONFIG_GROUP_VERSIONS.has(String(obj.apiVersion))) {
    return fail(
      `no kind "${String(obj.kind ?? '')}" is registered for version "${String(obj.apiVersion ?? '')}" in "${file}" (expected apiserver.config.k8s.io/v1 AdmissionConfiguration)`,
    );
  }
  const plugins = obj.plugins ?? [];
  if (!Array.isArray(plugins)) return fail(`plugins must be a list in "${file}"`);
  const dir = path.dirname(path.resolve(file));
  for (const p of plugins as Record<string, unknown>[]) {
    const name = typeof p?.name === 'string' ? p.name : '';
    if (!name) return fail(`a plugin without a name in "${file}"`);
    if (p.configuration !== undefined && p.configuration !== null) {
      out.set(name, p.configuration);
      continue;
    }
    if (typeof p.path === 'string' && p.path) {
      const target = path.isAbsolute(p.path) ? p.path : path.join(dir, p.path);
      let raw: string;
      try {
        raw = readFileSync(target, 'utf8');
      } catch (err) {
        return fail(`unable to read plugin config for ${name} from "${target}": ${(err as Error).message}`);
      }
      try {
        out.set(name, parseConfigYaml(raw));
      } catch (err) {
        return fail(`unable to decode plugin config for ${name} from "${target}": ${(err as Error).message}`);
      }
    }
  }
  return out;
}
