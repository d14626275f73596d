import type { IncomingMessage } from "node:http";
import type { Scope } from "@pai/core";

/**
 * Who is calling. The playground has no sign-in: the user name comes from the `x-pai-user`
 * header or the `pai_user` cookie (the UI's user switcher sets it), default `demo`. The name
 * `admin` gets the admin role, which enables the admin-only tool. Everyone shares one scope,
 * so every user sees every thread; a real app derives identity from its own auth.
 */
export type PlaygroundIdentity = { userId: string; role: "user" | "admin" };

export const PLAYGROUND_SCOPE = "playground";
const USER_NAME = /^[a-zA-Z0-9_-]{1,32}$/;

function cookie(header: string | undefined, name: string): string | undefined {
  for (const pair of (header ?? "").split(";")) {
    const [key, ...rest] = pair.trim().split("=");
    if (key === name) return decodeURIComponent(rest.join("="));
  }
  return undefined;
}

/** The identity of an HTTP request (header first, then cookie). Invalid names fall back to `demo`. */
export function identityFromRequest(req: Pick<IncomingMessage, "headers">): PlaygroundIdentity {
  const header = req.headers["x-pai-user"];
  const raw = (Array.isArray(header) ? header[0] : header) ?? cookie(req.headers.cookie, "pai_user");
  const userId = raw && USER_NAME.test(raw) ? raw : "demo";
  return { userId, role: userId === "admin" ? "admin" : "user" };
}

/** The trusted scope of an identity: one shared scope, the user recorded as creator. */
export function scopeOf(identity: unknown): Scope {
  const { userId } = identity as PlaygroundIdentity;
  return { scopeKey: PLAYGROUND_SCOPE, userKey: userId };
}
