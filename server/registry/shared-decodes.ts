// Objects handed to readers that change nothing in them: decoded once per stored version (the
// watch cache keeps one text object per version) and frozen, so that every reader shares one.

import type { KubeObject, StoredObjectText } from '../../storage/interface.js';
import { deepFreeze } from './object.js';

export class SharedDecodes {
  private readonly byVersion = new WeakMap<StoredObjectText, KubeObject>();

  /** the frozen object of `item`, `decode`d the first time it is asked for */
  get(item: StoredObjectText, decode: (item: StoredObjectText) => KubeObject): KubeObject {
    let obj = this.byVersion.get(item);
    if (!obj) {
      obj = deepFreeze(decode(item));
      this.byVersion.set(item, obj);
    }
    return obj;
  }
}
