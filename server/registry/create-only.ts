// A resource that answers only POST: the pods/binding, pods/eviction and serviceaccounts/token
// subresources and the review kinds. Every other verb is 405 with kube-apiserver's message,
// which names the resource (and subresource) the request was for.

import type { KubeObject, Watch } from '../../storage/interface.js';
import type { ResourceInfo } from '../apis/types.js';
import { errors } from '../machinery/status.js';
import type { DeleteRequestOptions, ListObject, RequestContext, RESTResource } from './rest.js';

export abstract class CreateOnlyResource implements RESTResource {
  // declared, not defined: a resource that is not a subresource has no `subresource` member
  declare readonly subresource?: string;

  constructor(
    readonly info: ResourceInfo,
    subresource?: string,
  ) {
    if (subresource !== undefined) this.subresource = subresource;
  }

  abstract create(ctx: RequestContext, obj: KubeObject): Promise<KubeObject>;

  private unsupported(): never {
    const what = this.subresource ? `${this.info.resource}/${this.subresource}` : this.info.resource;
    throw errors.methodNotAllowed(`the server does not allow this method on the requested resource (${what})`);
  }
  async get(): Promise<KubeObject> {
    this.unsupported();
  }
  async list(): Promise<ListObject> {
    this.unsupported();
  }
  async watch(): Promise<Watch> {
    this.unsupported();
  }
  async update(): Promise<{ object: KubeObject; created: boolean }> {
    this.unsupported();
  }
  async delete(_ctx: RequestContext, _name: string, _opts: DeleteRequestOptions): Promise<{ object: KubeObject; deleted: boolean }> {
    this.unsupported();
  }
  async deleteCollection(): Promise<ListObject> {
    this.unsupported();
  }
}
