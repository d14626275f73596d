// Type checks only, never run: the host's router through @trpc/tanstack-react-query, as a React
// app would use it. `tsc --noEmit` of the host fails if PAI's procedure types stop flowing.
import { QueryClient } from "@tanstack/react-query";
import { createTRPCClient, httpLink } from "@trpc/client";
import { createTRPCOptionsProxy } from "@trpc/tanstack-react-query";
import superjson from "superjson";
import type { AppRouter } from "./server.js";

const trpc = createTRPCOptionsProxy<AppRouter>({
  client: createTRPCClient<AppRouter>({
    links: [httpLink({ url: "http://127.0.0.1", transformer: superjson })],
  }),
  queryClient: new QueryClient(),
});

const submit = trpc.pai.actions.submit.mutationOptions();
type SubmitVariables = Parameters<NonNullable<typeof submit.mutationFn>>[0];
export const approve: SubmitVariables = {
  threadId: "t",
  actionId: "a",
  name: "requestApproval.approval",
  payload: { approved: true },
};
// @ts-expect-error the approval's resume schema wants { approved: boolean }
export const wrongPayload: SubmitVariables = {
  threadId: "t",
  actionId: "a",
  name: "requestApproval.approval",
  payload: { ok: 1 },
};
// @ts-expect-error no action of the agent has this name
export const wrongName: SubmitVariables = {
  threadId: "t",
  actionId: "a",
  name: "requestApproval.other",
  payload: {},
};

const view = trpc.pai.threads.get.queryOptions({ threadId: "t" });
type View = Awaited<ReturnType<NonNullable<typeof view.queryFn>>>;
type HasKey<T, K extends PropertyKey> = K extends keyof T ? true : false;
// The client view: pending actions and UI messages, no storage rows, no scope key.
export const viewShape: [
  HasKey<View, "pending">,
  HasKey<View, "actions">,
  HasKey<View["thread"], "scopeKey">,
] = [true, false, false];
