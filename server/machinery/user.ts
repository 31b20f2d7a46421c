// Who a request is from, as authentication found it (kube's user.Info): what authorization,
// admission, audit and the registry all read.

export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}
