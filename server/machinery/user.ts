// Who a request is from, as authentication found it (kube's user.Info): what authorization,
// admission, audit and the registry all read.

export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** `user` as one object that every request with its credential can share: frozen with its
 *  groups, so that nothing changes it and later stages can remember their work by it */
export function frozenUser(user: UserInfo): UserInfo {
  Object.freeze(user.groups);
  return Object.freeze(user);
}

const nameAndGroupKeys = new WeakMap<UserInfo, string>();

/**
 * One string for a user's name and groups (what RBAC rules and FlowSchema subjects match on),
 * for keys of remembered decisions. Made once per frozen user object (authentication hands
 * every request with one credential the same frozen object); made anew for any other, which
 * may still change.
 */
export function nameAndGroupsKey(user: UserInfo): string {
  const frozen = Object.isFrozen(user) && Object.isFrozen(user.groups);
  let key = frozen ? nameAndGroupKeys.get(user) : undefined;
  if (key === undefined) {
    key = `${user.username}\0${user.groups.join('\x01')}`;
    if (frozen) nameAndGroupKeys.set(user, key);
  }
  return key;
}
