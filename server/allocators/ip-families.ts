// ipFamilyPolicy and ipFamilies of a Service, decided before any address is allocated (kube's
// initIPFamilyFields and ValidateServiceClusterIPsRelatedFields): defaults from the cluster's
// configured families, the checks that make the rest of allocation simple, and the 422s for
// what cannot be satisfied. Works on the stored (v1) JSON form; mutates `spec`.

import { invalidError, fieldErrors, type FieldError } from '../machinery/validation/field-error.js';
import {
  ClusterIPNone,
  clusterIPOf,
  clusterIPsOf,
  ipFamiliesOf,
  ipFamilyPolicyOf,
  isHeadless,
  needsClusterIP,
  sameClusterIPs,
  sameIPFamilies,
  typeOf,
} from '../registry/core/service-fields.js';
import type { JsonObject } from '../registry/object.js';
import { familyOf, otherFamily, type IPFamily } from './ip.js';

const supportedFamilies = ['IPv4', 'IPv6'];
const supportedPolicies = ['PreferDualStack', 'RequireDualStack', 'SingleStack'];
const invalidIPMessage = 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)';

/** the format checks of clusterIP(s), ipFamilies and ipFamilyPolicy */
export function validateClusterIPFields(spec: JsonObject): FieldError[] {
  if (typeOf(spec) === 'ExternalName') return [];
  const errs: FieldError[] = [];
  const ip = clusterIPOf(spec);
  const ips = clusterIPsOf(spec);
  if (ip) {
    if (ips.length === 0) errs.push(fieldErrors.required('spec.clusterIPs'));
    else if (ips[0] !== ip) errs.push(fieldErrors.invalid('spec.clusterIPs', ips, 'first value must match `clusterIP`'));
  } else if (ips.length > 0) {
    errs.push(fieldErrors.invalid('spec.clusterIPs', ips, 'must be empty when `clusterIP` is not specified'));
  }
  const seen = new Set<string>();
  ipFamiliesOf(spec).forEach((f, i) => {
    if (!supportedFamilies.includes(f)) errs.push(fieldErrors.notSupported(`spec.ipFamilies[${i}]`, f, supportedFamilies));
    if (seen.has(f)) errs.push(fieldErrors.duplicate(`spec.ipFamilies[${i}]`, f));
    seen.add(f);
  });
  const policy = spec.ipFamilyPolicy;
  if (policy !== undefined && policy !== null && !supportedPolicies.includes(String(policy))) {
    errs.push(fieldErrors.notSupported('spec.ipFamilyPolicy', String(policy), supportedPolicies));
  }
  let badIPs = false;
  ips.forEach((v, i) => {
    if (i === 0 && v === ClusterIPNone) {
      if (ips.length > 1) {
        badIPs = true;
        errs.push(fieldErrors.invalid('spec.clusterIPs', ips, "'None' must be the first and only value"));
      }
      return;
    }
    if (!familyOf(v)) {
      badIPs = true;
      errs.push(fieldErrors.invalid(`spec.clusterIPs[${i}]`, v, invalidIPMessage));
    }
  });
  if (ips.length > 2) errs.push(fieldErrors.invalid('spec.clusterIPs', ips, 'may only hold up to 2 values'));
  if (badIPs) return errs;
  if (ips.length > 1 && familyOf(ips[0]!) === familyOf(ips[1]!)) {
    errs.push(fieldErrors.invalid('spec.clusterIPs', ips, 'may specify no more than one IP for each IP family'));
  }
  const families = ipFamiliesOf(spec);
  if (!isHeadless(spec)) {
    ips.forEach((v, i) => {
      if (i >= families.length) return;
      if (families[i] === 'IPv4' && familyOf(v) === 'IPv6') {
        errs.push(fieldErrors.invalid(`spec.clusterIPs[${i}]`, v, `expected an IPv4 value as indicated by \`ipFamilies[${i}]\``));
      }
      if (families[i] === 'IPv6' && familyOf(v) !== 'IPv6') {
        errs.push(fieldErrors.invalid(`spec.clusterIPs[${i}]`, v, `expected an IPv6 value as indicated by \`ipFamilies[${i}]\``));
      }
    });
  }
  return errs;
}

/** an update of a PreferDualStack Service that leaves its addresses alone: nothing to do */
export function unchangedPreferDualStack(spec: JsonObject, old: JsonObject | undefined): boolean {
  if (!old || !spec.ipFamilyPolicy) return false;
  if (typeOf(old) !== typeOf(spec) || !needsClusterIP(spec)) return false;
  if (ipFamilyPolicyOf(spec) !== 'PreferDualStack' || (old.ipFamilyPolicy && ipFamilyPolicyOf(old) !== 'PreferDualStack')) return false;
  return sameClusterIPs(old, spec) && sameIPFamilies(old, spec);
}

function reduced(now: string[], before: string[]): boolean {
  return now.length > 0 && now.length < before.length;
}

/**
 * Defaults and checks ipFamilyPolicy and ipFamilies for the cluster's `configured` families
 * (primary first). Throws a 422 for what cannot be served.
 */
export function initIPFamilyFields(spec: JsonObject, old: JsonObject | undefined, configured: readonly IPFamily[], name: string): void {
  if (typeOf(spec) === 'ExternalName') return;
  if (unchangedPreferDualStack(spec, old)) return;
  const primary = configured[0]!;
  const invalid = (errs: FieldError[]) => invalidError('', 'Service', name, errs);

  if (!spec.ipFamilyPolicy) {
    const selectorless = Object.keys((spec.selector as object | undefined) ?? {}).length === 0;
    if (old?.ipFamilyPolicy) spec.ipFamilyPolicy = old.ipFamilyPolicy;
    else if (clusterIPOf(spec) === ClusterIPNone && selectorless) spec.ipFamilyPolicy = 'RequireDualStack';
    else spec.ipFamilyPolicy = 'SingleStack';
  }
  const pre = validateClusterIPFields(spec);
  if (pre.length) throw invalid(pre);

  const errs: FieldError[] = [];
  const policy = ipFamilyPolicyOf(spec);
  if (old) {
    if (policy === 'SingleStack') {
      // single-stack is clear intent to drop the secondary address and family
      if (sameClusterIPs(old, spec) && clusterIPsOf(spec).length > 1) spec.clusterIPs = clusterIPsOf(spec).slice(0, 1);
      if (sameIPFamilies(old, spec) && ipFamiliesOf(spec).length > 1) spec.ipFamilies = ipFamiliesOf(spec).slice(0, 1);
    } else {
      if (reduced(clusterIPsOf(spec), clusterIPsOf(old))) {
        errs.push(fieldErrors.invalid('spec.ipFamilyPolicy', policy, "must be 'SingleStack' to release the secondary cluster IP"));
      }
      if (reduced(ipFamiliesOf(spec), ipFamiliesOf(old))) {
        errs.push(fieldErrors.invalid('spec.ipFamilyPolicy', policy, "must be 'SingleStack' to release the secondary IP family"));
      }
    }
  }
  if (policy === 'SingleStack') {
    if (clusterIPsOf(spec).length === 2) {
      errs.push(
        fieldErrors.invalid(
          'spec.ipFamilyPolicy',
          policy,
          "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified",
        ),
      );
    }
    if (ipFamiliesOf(spec).length === 2) {
      errs.push(
        fieldErrors.invalid(
          'spec.ipFamilyPolicy',
          policy,
          "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified",
        ),
      );
    }
  }
  // families follow from the requested addresses
  const ips = clusterIPsOf(spec);
  const families = ipFamiliesOf(spec);
  for (let i = 0; i < ips.length; i++) {
    if (ips[i] === ClusterIPNone) break;
    if (i < families.length) continue;
    const f = familyOf(ips[i]!)!;
    if (!configured.includes(f)) errs.push(fieldErrors.invalid(`spec.clusterIPs[${i}]`, ips, `${f} is not configured on this cluster`));
    else families.push(f);
  }
  if (errs.length) throw invalid(errs);
  if (families.length) spec.ipFamilies = families;

  // headless without a selector may carry families the cluster does not serve
  if (clusterIPOf(spec) === ClusterIPNone && Object.keys((spec.selector as object | undefined) ?? {}).length === 0) {
    if (families.length === 0) families.push(primary);
    if (families.length < 2 && policy !== 'SingleStack') families.push(otherFamily(families[0] as IPFamily));
    spec.ipFamilies = families;
    return;
  }

  if (policy === 'RequireDualStack' && configured.length < 2) {
    errs.push(fieldErrors.invalid('spec.ipFamilyPolicy', policy, 'this cluster is not configured for dual-stack services'));
  }
  families.forEach((f, i) => {
    if (!configured.includes(f as IPFamily)) errs.push(fieldErrors.invalid(`spec.ipFamilies[${i}]`, f, 'not configured on this cluster'));
  });
  if (errs.length) throw invalid(errs);
  if (families.length === 0) families.push(primary);
  if (policy !== 'SingleStack' && families.length === 1 && configured.length === 2) families.push(otherFamily(families[0] as IPFamily));
  spec.ipFamilies = families;
}
