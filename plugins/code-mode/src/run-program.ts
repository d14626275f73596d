import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import {
  newQuickJSWASMModule,
  newVariant,
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSWASMModule,
  RELEASE_SYNC,
} from "quickjs-emscripten";

/** Limits one program runs under. */
export type ProgramLimits = {
  /** Wall-clock limit for the whole program, including awaited tool calls, in ms. */
  timeoutMs: number;
  /** Memory a program may use on top of the interpreter's fixed 16 MiB baseline, in bytes. */
  memoryBytes: number;
  /** Stack limit of the QuickJS runtime, in bytes. */
  maxStackBytes: number;
  /** Maximum number of `console.log` lines kept. */
  maxLogLines: number;
};

/** A host function the program may call: receives JSON input, resolves to a JSON-serializable value. */
export type ProgramFunction = (input: unknown, signal: AbortSignal) => Promise<unknown>;

export type ProgramOutcome =
  | { ok: true; result: unknown; logs: string[] }
  | { ok: false; reason: "timeout" | "memory" | "error" | "aborted"; message: string; logs: string[] };

const PAGE_BYTES = 64 * 1024;
/** Linear memory the interpreter needs before any program runs (its own default initial size). */
export const QUICKJS_BASE_MEMORY_BYTES = 16 * 1024 * 1024;

let compiled: Promise<WebAssembly.Module> | undefined;

/** The QuickJS WebAssembly code, compiled once per process. */
function compiledQuickJs(): Promise<WebAssembly.Module> {
  compiled ??= (async () => {
    const require = createRequire(import.meta.url);
    return WebAssembly.compile(await readFile(require.resolve("@jitl/quickjs-wasmfile-release-sync/wasm")));
  })();
  return compiled;
}

/**
 * A fresh QuickJS instance whose WebAssembly memory cannot grow past the limit. QuickJS's own
 * `setMemoryLimit` bounds single allocations only in this build (its byte accounting is
 * missing under Emscripten), so the hard cap is the memory itself: a failed grow makes the
 * allocation fail and QuickJS throws "out of memory" inside the program.
 */
async function boundedQuickJs(memoryBytes: number): Promise<QuickJSWASMModule> {
  const pages = (bytes: number) => Math.ceil(bytes / PAGE_BYTES);
  const wasmMemory = new WebAssembly.Memory({
    initial: pages(QUICKJS_BASE_MEMORY_BYTES),
    maximum: pages(QUICKJS_BASE_MEMORY_BYTES + memoryBytes),
  });
  return newQuickJSWASMModule(newVariant(RELEASE_SYNC, { wasmModule: await compiledQuickJs(), wasmMemory }));
}

const PRELUDE = (names: string[]) => `
(() => {
  const call = globalThis.__paiCall;
  delete globalThis.__paiCall;
  const tools = Object.freeze({
${names
  .map(
    (name) =>
      `    ${JSON.stringify(name)}: async (input) => JSON.parse(await call(${JSON.stringify(name)}, JSON.stringify(input === undefined ? {} : input))),`,
  )
  .join("\n")}
  });
  Object.defineProperty(globalThis, "tools", { value: tools, enumerable: true });
})();
`;

/**
 * Runs a model-written program in a fresh QuickJS runtime: no host objects except `tools`
 * (async functions calling back into the host) and `console.log`. The program body runs
 * inside an async function, so it can `await` and must `return` its result.
 */
export async function runProgram(input: {
  code: string;
  functions: Record<string, ProgramFunction>;
  limits: ProgramLimits;
  signal: AbortSignal;
}): Promise<ProgramOutcome> {
  // One WebAssembly instance per program: its memory is the program's memory limit, and it is
  // dropped as a whole afterwards.
  const QuickJS = await boundedQuickJs(input.limits.memoryBytes);
  const { limits } = input;
  const logs: string[] = [];
  const deadline = Date.now() + limits.timeoutMs;
  const calls = new AbortController();
  const runtime = QuickJS.newRuntime();
  runtime.setMemoryLimit(limits.memoryBytes);
  runtime.setMaxStackSize(limits.maxStackBytes);
  // Polled by the interpreter while it runs JavaScript: stops busy loops at the deadline.
  runtime.setInterruptHandler(() => Date.now() > deadline || input.signal.aborted);
  const vm = runtime.newContext();
  let disposed = false;
  const handles: QuickJSHandle[] = [];
  const deferreds: Array<{ alive: boolean; dispose(): void }> = [];
  let failure: ProgramOutcome | undefined;

  const classify = (message: string): ProgramOutcome => {
    if (input.signal.aborted)
      return { ok: false, reason: "aborted", message: "The program was cancelled.", logs };
    if (/interrupted/i.test(message) || Date.now() > deadline) {
      return {
        ok: false,
        reason: "timeout",
        message: `The program was stopped at the time limit of ${limits.timeoutMs} ms. Make it do less work or fewer tool calls.`,
        logs,
      };
    }
    if (/out of memory/i.test(message)) {
      return {
        ok: false,
        reason: "memory",
        message: `The program ran out of memory (limit ${limits.memoryBytes} bytes). Process less data at a time.`,
        logs,
      };
    }
    return { ok: false, reason: "error", message: `The program threw: ${message}`, logs };
  };

  const errorMessage = (handle: QuickJSHandle): string => {
    const dumped = vm.dump(handle) as { name?: string; message?: string } | string;
    if (typeof dumped === "object" && dumped !== null) {
      return dumped.name && dumped.name !== "Error"
        ? `${dumped.name}: ${dumped.message}`
        : String(dumped.message);
    }
    return String(dumped);
  };

  const executePendingJobs = () => {
    if (disposed) return;
    const result = runtime.executePendingJobs();
    if (result.error) {
      failure ??= classify(errorMessage(result.error));
      result.error.dispose();
    }
  };

  try {
    const consoleObject = vm.newObject();
    handles.push(consoleObject);
    const log = vm.newFunction("log", (...args) => {
      if (logs.length < limits.maxLogLines) {
        logs.push(
          args
            .map((arg) => (vm.typeof(arg) === "string" ? vm.getString(arg) : JSON.stringify(vm.dump(arg))))
            .join(" "),
        );
      }
    });
    vm.setProp(consoleObject, "log", log);
    log.dispose();
    vm.setProp(vm.global, "console", consoleObject);

    const call = vm.newFunction("__paiCall", (nameHandle, inputHandle) => {
      const name = vm.getString(nameHandle);
      const json = vm.getString(inputHandle);
      const deferred = vm.newPromise();
      deferreds.push(deferred);
      const fn = input.functions[name];
      const settle = (action: () => void) => {
        if (disposed) return;
        action();
        executePendingJobs();
      };
      Promise.resolve()
        .then(() => {
          if (!fn) throw new Error(`No tool named ${name}.`);
          return fn(JSON.parse(json), calls.signal);
        })
        .then(
          (value) =>
            settle(() => {
              const text = vm.newString(JSON.stringify(value ?? null));
              deferred.resolve(text);
              text.dispose();
            }),
          (error: unknown) =>
            settle(() => {
              const vmError = vm.newError({
                name: (error as Error)?.name ?? "Error",
                message: (error as Error)?.message ?? String(error),
              });
              deferred.reject(vmError);
              vmError.dispose();
            }),
        );
      return deferred.handle;
    });
    vm.setProp(vm.global, "__paiCall", call);
    call.dispose();

    const prelude = vm.evalCode(PRELUDE(Object.keys(input.functions)), "prelude.js");
    if (prelude.error) {
      const message = errorMessage(prelude.error);
      prelude.error.dispose();
      throw new Error(`code-mode prelude failed: ${message}`);
    }
    prelude.value.dispose();

    const evaluated = vm.evalCode(`(async () => {\n${input.code}\n})()`, "program.js");
    if (evaluated.error) {
      const outcome = classify(errorMessage(evaluated.error));
      evaluated.error.dispose();
      return outcome;
    }
    const promise = evaluated.value;
    handles.push(promise);
    // resolvePromise attaches its callbacks as VM jobs: run them so a settled program is seen.
    const resolving = vm.resolvePromise(promise);
    executePendingJobs();

    // The program may wait on tool calls; the host enforces the deadline while it waits.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stopped = new Promise<"stopped">((resolve) => {
      timer = setTimeout(() => resolve("stopped"), Math.max(0, deadline - Date.now()));
      input.signal.addEventListener("abort", () => resolve("stopped"), { once: true });
    });
    try {
      const settled = await Promise.race([resolving, stopped]);
      if (failure) return failure;
      if (settled === "stopped") return classify("interrupted");
      if (settled.error) {
        const outcome = classify(errorMessage(settled.error));
        settled.error.dispose();
        return outcome;
      }
      const value = vm.dump(settled.value);
      settled.value.dispose();
      return { ok: true, result: value === undefined ? null : JSON.parse(JSON.stringify(value)), logs };
    } finally {
      clearTimeout(timer);
    }
  } catch (error) {
    return classify((error as Error)?.message ?? String(error));
  } finally {
    calls.abort();
    disposed = true;
    for (const deferred of deferreds) if (deferred.alive) deferred.dispose();
    for (const handle of handles) if (handle.alive) handle.dispose();
    disposeQuietly(vm, runtime);
  }
}

function disposeQuietly(vm: QuickJSContext, runtime: { dispose(): void }) {
  // A runtime with unfinished promises can report leaked objects on dispose; the whole heap
  // is being thrown away, so that is not an error for the caller.
  try {
    vm.dispose();
  } catch {}
  try {
    runtime.dispose();
  } catch {}
}
