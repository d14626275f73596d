/**
 * Declaration-merging registry for the host app's types:
 *
 *   declare module "@pai/core" { interface Register { identity: { userId: string; workspaceId: string } } }
 */
// biome-ignore lint/suspicious/noEmptyInterface: augmented by host apps.
export interface Register {}

/** The host app's identity type, or `unknown` until registered. */
export type Identity = Register extends { identity: infer TIdentity } ? TIdentity : unknown;

/** Trusted tenancy derived by the host from its identity. Every thread, action and file has one scope. */
export type Scope = {
  /** Tenant boundary: threads, actions and files of another scope are NOT_FOUND. */
  scopeKey: string;
  /** The acting user inside the scope; recorded as creator provenance. */
  userKey?: string | null;
};
