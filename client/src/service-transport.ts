import type { Identity, PaiService } from "@pai/core";
import { toClientFile } from "@pai/core/protocol";
import type { PaiTransport } from "./transport.js";

export type ServiceTransportOptions = {
  service: PaiService;
  /** The identity every call runs as, or a function returning it per call. */
  identity: Identity | (() => Identity | Promise<Identity>);
};

/**
 * An in-process transport: calls a `PaiService` directly with a fixed identity. Useful on
 * trusted servers (jobs, operators, tests) where no HTTP hop is needed.
 */
export function serviceTransport({ service, identity }: ServiceTransportOptions): PaiTransport {
  const resolve = async (): Promise<Identity> =>
    typeof identity === "function" ? await (identity as () => Identity | Promise<Identity>)() : identity;
  return {
    manifest: async (input = {}) => service.manifest({ ...input, identity: await resolve() }),
    threads: {
      create: async (input) => service.threads.create({ ...input, identity: await resolve() }),
      list: async (input = {}) => service.threads.list({ ...input, identity: await resolve() }),
      get: async (input) => service.threads.get({ ...input, identity: await resolve() }),
      send: async (input) => service.threads.send({ ...input, identity: await resolve() }),
      cancel: async (input) => service.threads.cancel({ ...input, identity: await resolve() }),
      watch: ({ onOpen, ...input }) => ({
        async *[Symbol.asyncIterator]() {
          const events = service.threads.watch({ ...input, identity: await resolve() });
          onOpen?.();
          yield* events;
        },
      }),
    },
    actions: {
      list: async (input = {}) => service.actions.list({ ...input, identity: await resolve() }),
      submit: async (input) => service.actions.submit({ ...input, identity: await resolve() }),
      cancel: async (input) => service.actions.cancel({ ...input, identity: await resolve() }),
      fail: async (input) => service.actions.fail({ ...input, identity: await resolve() }),
    },
    files: {
      upload: async (input) =>
        toClientFile(
          await service.files.upload({ ...input, size: input.body.byteLength, identity: await resolve() }),
        ),
      get: async ({ fileId, inline }) => {
        const who = await resolve();
        if (!inline && service.files.downloadUrl) {
          const downloadUrl = await service.files.downloadUrl({ fileId, identity: who });
          if (downloadUrl) {
            return { file: toClientFile(await service.files.head({ fileId, identity: who })), downloadUrl };
          }
        }
        const stored = await service.files.get({ fileId, identity: who });
        const body = await stored.bytes();
        const { body: _stream, bytes: _bytes, text: _text, ...file } = stored;
        return { file: toClientFile(file), body };
      },
    },
  };
}
