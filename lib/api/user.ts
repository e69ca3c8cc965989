/** Who a request is from, as authentication found it (kube's `user.Info`). */
export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}
