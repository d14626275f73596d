import superjson from "superjson";

/** A tRPC error as the host app's formatter sends it (with `paiErrorData`). */
export type SubscriptionError = {
  message: string;
  data: { httpStatus: number; code: string; pai: { code: string; issues?: Array<{ path: unknown[] }> } };
};

/**
 * Opens a tRPC subscription over raw SSE (superjson) and reads it until it returns or fails:
 * the error it fails with, or null. Raw, so a test sees exactly what the server sent.
 */
export async function subscriptionError(
  url: string,
  path: string,
  input: unknown,
): Promise<SubscriptionError | null> {
  const controller = new AbortController();
  const query = encodeURIComponent(JSON.stringify(superjson.serialize(input)));
  const response = await fetch(`${url}/${path}?input=${query}`, {
    headers: { accept: "text/event-stream" },
    signal: controller.signal,
  });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return null;
      buffer += decoder.decode(value, { stream: true });
      for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = /^event: ?(.*)$/m.exec(block)?.[1];
        const data = block
          .split("\n")
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(5).trimStart())
          .join("\n");
        if (event === "return") return null;
        if (event === "serialized-error") return superjson.deserialize(JSON.parse(data)) as SubscriptionError;
      }
    }
  } finally {
    controller.abort();
  }
}
