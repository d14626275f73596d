// The identity types live in the definitions layer, which resolvers and the runtime need without
// depending on the service; this path stays for the service's own imports.
export type { Identity, Register, Scope } from "../definitions/identity.js";
