/** Who a request is from, as authentication found it (kube's `user.Info`). */
export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** The user of the admin token and the admin kubeconfig. */
export const ADMIN_USER = "platform-admin";
/** The group of the admin user: allowed everything by the authorizer. */
export const ADMIN_GROUP = "system:masters";
