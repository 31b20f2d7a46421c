// kube's certificate admission plugins (plugin/pkg/admission/certificates/...):
// - CertificateApproval: an update of `certificatesigningrequests/approval` needs the `approve`
//   verb on `signers` (certificates.k8s.io) named after the CSR's signer (or `<domain>/*`);
// - CertificateSigning: an update of `certificatesigningrequests/status` that changes
//   status.certificate needs the `sign` verb on that signer;
// - CertificateSubjectRestriction: a CSR for `kubernetes.io/kube-apiserver-client` whose
//   subject names the group (Organization) `system:masters` is refused;
// - ClusterTrustBundleAttest: writing a ClusterTrustBundle with a signerName needs `attest`
//   on that signer (only with the ClusterTrustBundle feature gate, off by default in 1.33).
// The signer checks ask the cluster's authorizer as an access review would.

import 'reflect-metadata';
import { Pkcs10CertificateRequest } from '@peculiar/x509';
import type { KubeObject } from '../../../storage/interface.js';
import { asObject, jsonEqual } from '../../registry/object.js';
import type { AdmissionAttributes } from '../../registry/rest.js';
import type { UserInfo } from '../../machinery/user.js';
import type { ReviewAuthorizer } from '../../machinery/access-review.js';
import type { AdmissionPlugin, AdmissionPluginFactory } from '../plugin.js';
import { forbidden, groupResource } from './shared.js';

const csrResource = 'certificates.k8s.io/certificatesigningrequests';
const kubeAPIServerClientSigner = 'kubernetes.io/kube-apiserver-client';

/** allowed to `verb` the signer by its name, or by `<domain>/*` */
export async function authorizedForSigner(
  authz: ReviewAuthorizer | undefined,
  user: UserInfo,
  verb: string,
  signerName: string,
): Promise<boolean> {
  if (!authz) return true;
  const ask = async (name: string): Promise<boolean> => {
    try {
      const d = await authz.authorize({
        user,
        resourceAttributes: { verb, group: 'certificates.k8s.io', version: '*', resource: 'signers', name },
      });
      return d.allowed;
    } catch {
      return false;
    }
  };
  if (await ask(signerName)) return true;
  const domain = signerName.split('/')[0] ?? '';
  return ask(`${domain}/*`);
}

function signerOf(obj: KubeObject | null): string {
  const s = asObject(obj?.spec).signerName;
  return typeof s === 'string' ? s : '';
}

export const certificateApproval: AdmissionPluginFactory = {
  name: 'CertificateApproval',
  create(deps): AdmissionPlugin {
    return {
      name: 'CertificateApproval',
      handles: (attrs) => attrs.operation === 'UPDATE' && attrs.subresource === 'approval' && groupResource(attrs) === csrResource,
      async validate(attrs) {
        // the old object's signer: an approval cannot change it, and must not dodge the check
        const signer = signerOf(attrs.oldObject);
        if (!(await authorizedForSigner(deps.authorizer, attrs.user, 'approve', signer))) {
          throw forbidden(attrs, `user not permitted to approve requests with signerName "${signer}"`);
        }
      },
    };
  },
};

export const certificateSigning: AdmissionPluginFactory = {
  name: 'CertificateSigning',
  create(deps): AdmissionPlugin {
    return {
      name: 'CertificateSigning',
      handles: (attrs) => attrs.operation === 'UPDATE' && attrs.subresource === 'status' && groupResource(attrs) === csrResource,
      async validate(attrs) {
        const before = asObject(attrs.oldObject?.status).certificate;
        const after = asObject(attrs.object?.status).certificate;
        if (jsonEqual(before ?? null, after ?? null)) return;
        const signer = signerOf(attrs.oldObject);
        if (!(await authorizedForSigner(deps.authorizer, attrs.user, 'sign', signer))) {
          throw forbidden(attrs, `user not permitted to sign requests with signerName "${signer}"`);
        }
      },
    };
  },
};

/** the Organization entries of a base64 PEM CERTIFICATE REQUEST */
export function csrOrganizations(request: string): string[] {
  const pem = Buffer.from(request, 'base64').toString('latin1');
  const csr = new Pkcs10CertificateRequest(pem);
  return csr.subjectName.getField('O');
}

export const certificateSubjectRestriction: AdmissionPluginFactory = {
  name: 'CertificateSubjectRestriction',
  create(): AdmissionPlugin {
    return {
      name: 'CertificateSubjectRestriction',
      handles: (attrs) => attrs.operation === 'CREATE' && !attrs.subresource && groupResource(attrs) === csrResource,
      validate(attrs) {
        if (signerOf(attrs.object) !== kubeAPIServerClientSigner) return;
        const request = asObject(attrs.object?.spec).request;
        let orgs: string[];
        try {
          orgs = csrOrganizations(typeof request === 'string' ? request : '');
        } catch (err) {
          throw forbidden(attrs, `failed to parse CSR: ${err instanceof Error ? err.message : String(err)}`);
        }
        if (orgs.includes('system:masters')) {
          throw forbidden(attrs, `use of ${kubeAPIServerClientSigner} signer with system:masters group is not allowed`);
        }
      },
    };
  },
};

/** an update that changes only what garbage collection writes (owners, finalizers) */
function onlyGCFieldsChanged(obj: KubeObject, old: KubeObject): boolean {
  const strip = (o: KubeObject): unknown => {
    const {
      ownerReferences: _o,
      finalizers: _f,
      resourceVersion: _r,
      managedFields: _m,
      generation: _g,
      ...meta
    } = o.metadata as Record<string, unknown>;
    return { ...o, metadata: meta };
  };
  return jsonEqual(strip(obj), strip(old));
}

export const clusterTrustBundleAttest: AdmissionPluginFactory = {
  name: 'ClusterTrustBundleAttest',
  create(deps): AdmissionPlugin {
    const enabled = deps.featureGates.ClusterTrustBundle === true;
    return {
      name: 'ClusterTrustBundleAttest',
      handles: (attrs: AdmissionAttributes) =>
        enabled &&
        (attrs.operation === 'CREATE' || attrs.operation === 'UPDATE') &&
        groupResource(attrs) === 'certificates.k8s.io/clustertrustbundles',
      async validate(attrs) {
        const signer = signerOf(attrs.object);
        if (!signer) return;
        if (attrs.operation === 'UPDATE' && attrs.object && attrs.oldObject && onlyGCFieldsChanged(attrs.object, attrs.oldObject)) return;
        if (!(await authorizedForSigner(deps.authorizer, attrs.user, 'attest', signer))) {
          throw forbidden(attrs, `user not permitted to attest for signerName "${signer}"`);
        }
      },
    };
  },
};
