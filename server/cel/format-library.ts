// Kubernetes' CEL format library: `format.dns1123Label()` (and the other named formats),
// `format.named(name)` (optional), and `Format.validate(s)`: none when `s` is valid, else the
// list of apimachinery's validation messages. Also `ip.isCanonical(s)` from the ip library,
// which needs the same namespace-constant form (cel-js has no dotted global function names).

import { Optional, type Environment } from '@marcbachmann/cel-js';
import {
  isQualifiedName,
  isValidLabelValue,
  nameIsDNS1035Label,
  nameIsDNSLabel,
  nameIsDNSSubdomain,
} from '../machinery/validation/names.js';
import { IPValue, parseAddress } from './network-library.js';

export class FormatValue {
  constructor(
    readonly name: string,
    readonly validate: (s: string) => string[],
  ) {}
}

class FormatNamespace {}
class IPNamespace {}

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

function validDate(s: string): boolean {
  const m = DATE.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const dt = new Date(Date.UTC(y, mo - 1, d));
  return dt.getUTCFullYear() === y && dt.getUTCMonth() === mo - 1 && dt.getUTCDate() === d;
}

function validURI(s: string): string[] {
  if (s.startsWith('/')) return [];
  try {
    new URL(s);
    return [];
  } catch {
    return [`parse "${s}": invalid URI for request`];
  }
}

const FORMATS: Record<string, FormatValue> = {
  dns1123Label: new FormatValue('DNS1123Label', (s) => nameIsDNSLabel(s, false)),
  dns1123Subdomain: new FormatValue('DNS1123Subdomain', (s) => nameIsDNSSubdomain(s, false)),
  dns1035Label: new FormatValue('DNS1035Label', (s) => nameIsDNS1035Label(s, false)),
  qualifiedName: new FormatValue('QualifiedName', isQualifiedName),
  dns1123LabelPrefix: new FormatValue('DNS1123LabelPrefix', (s) => nameIsDNSLabel(s, true)),
  dns1123SubdomainPrefix: new FormatValue('DNS1123SubdomainPrefix', (s) => nameIsDNSSubdomain(s, true)),
  dns1035LabelPrefix: new FormatValue('DNS1035LabelPrefix', (s) => nameIsDNS1035Label(s, true)),
  labelValue: new FormatValue('LabelValue', isValidLabelValue),
  uri: new FormatValue('URI', validURI),
  uuid: new FormatValue('uuid', (s) => (UUID.test(s) ? [] : ['does not match the UUID format'])),
  byte: new FormatValue('byte', (s) => (BASE64.test(s) ? [] : ['invalid base64'])),
  date: new FormatValue('date', (s) => (validDate(s) ? [] : ['invalid date'])),
  datetime: new FormatValue('datetime', (s) => (DATETIME.test(s) && validDate(s.slice(0, 10)) ? [] : ['invalid datetime'])),
};

/** registers `format` and `ip.isCanonical` (with the network library registered first) */
export function registerFormatLibrary(env: Environment): Environment {
  env
    .registerType('Format', FormatValue)
    .registerOperator('Format == Format', (a: FormatValue, b: FormatValue) => a.name === b.name)
    .registerType('FormatNamespace', FormatNamespace)
    .registerConstant('format', 'FormatNamespace', new FormatNamespace())
    .registerFunction('FormatNamespace.named(string): optional<Format>', (_ns: FormatNamespace, name: string) =>
      Object.hasOwn(FORMATS, name) ? Optional.of(FORMATS[name]) : Optional.none(),
    )
    .registerFunction('Format.validate(string): optional<list<string>>', (f: FormatValue, s: string) => {
      const errs = f.validate(s);
      return errs.length === 0 ? Optional.none() : Optional.of(errs);
    })
    .registerType('IPNamespace', IPNamespace)
    .registerConstant('ip', 'IPNamespace', new IPNamespace())
    .registerFunction('IPNamespace.isCanonical(string): bool', (_ns: IPNamespace, s: string) => {
      return new IPValue(parseAddress(s)).toString() === s;
    });
  for (const [name, f] of Object.entries(FORMATS)) {
    env.registerFunction(`FormatNamespace.${name}(): Format`, () => f);
  }
  return env;
}
