import { inProcessDispatch } from "@pai/core";
import { runDispatchConformance } from "@pai/core/testing/conformance";

// One shared in-process dispatch per namespace: it is the process's own queue.
const byNamespace = new Map<string, ReturnType<typeof inProcessDispatch>>();
runDispatchConformance({
  name: "in-process",
  durable: false,
  deliveryTimeoutMs: 5_000,
  create: (namespace) => {
    let dispatch = byNamespace.get(namespace);
    if (!dispatch) {
      dispatch = inProcessDispatch();
      byNamespace.set(namespace, dispatch);
    }
    return { ...dispatch, close: async () => undefined };
  },
});
