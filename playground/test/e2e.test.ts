import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { BrowserContext, Locator, Page, Request } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM, hasChromium, launchChromium, shownHints } from "./chromium.js";
import { freePort, PlaygroundProcess } from "./playground-process.js";

// The playground end to end: the built server (PGlite on disk, tRPC over HTTP, SSE) driven by
// Debian's headless Chromium through playwright-core, including server restarts while a tool
// waits for the user and while one runs.

const inCi = process.env.CI === "true";
const root = fileURLToPath(new URL("..", import.meta.url));
const artifacts = join(root, "test-artifacts");
const STEP_MS = 60_000;

if (!hasChromium && !inCi) {
  console.warn(
    `playground e2e skipped: ${CHROMIUM} is missing. Install it (apt-get install -y chromium) to run the browser test.`,
  );
}

describe.skipIf(!hasChromium && !inCi)("playground in headless Chromium", () => {
  let server: PlaygroundProcess;
  let context: BrowserContext;
  let page: Page;
  let dataDir: string;
  let profileDir: string;
  let shot = 0;
  const consoleLines: string[] = [];
  const inFlight = new Set<Request>();

  const screenshot = (name: string) =>
    page.screenshot({
      path: join(artifacts, `${String(++shot).padStart(2, "0")}-${name}.png`),
      fullPage: true,
    });
  const lastCard = (tool: string): Locator => page.getByTestId(`tool-${tool}`).last();
  const assistantText = () => page.getByTestId("message-assistant").last();
  /**
   * Sends a message in the open thread and waits until it is on screen. A run still finishing (a
   * tool card shows "done" before the model's last step ends) refuses a new message, so it waits
   * for the run first.
   */
  const send = async (text: string) => {
    await expect
      .poll(() => page.getByTestId("run-status").getAttribute("data-status"), { timeout: STEP_MS })
      .not.toBe("running");
    const before = await page.getByTestId("message-user").count();
    await page.getByTestId("composer").fill(text);
    await page.getByTestId("send").click();
    await expect.poll(() => page.getByTestId("message-user").count(), { timeout: STEP_MS }).toBe(before + 1);
  };

  beforeAll(async () => {
    if (!hasChromium) throw new Error(`CI=true but ${CHROMIUM} is missing: install chromium (.ci/run does).`);
    await promisify(execFile)(process.execPath, [join(root, "scripts/build.mjs")], { cwd: root });
    await rm(artifacts, { recursive: true, force: true });
    await mkdir(artifacts, { recursive: true });
    dataDir = await mkdtemp(join(tmpdir(), "pai-playground-e2e-"));
    profileDir = await mkdtemp(join(tmpdir(), "pai-playground-chromium-"));
    server = new PlaygroundProcess(await freePort(), dataDir);
    await server.start();
    context = await launchChromium(profileDir);
    page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(STEP_MS);
    page.on("console", (message) => consoleLines.push(`[${message.type()}] ${message.text()}`));
    page.on("pageerror", (error) => consoleLines.push(`[pageerror] ${error.message}`));
    // Requests still unanswered when the suite ends point at a hung call rather than a slow UI.
    page.on("request", (request) => inFlight.add(request));
    page.on("requestfinished", (request) => inFlight.delete(request));
    page.on("requestfailed", (request) => {
      inFlight.delete(request);
      consoleLines.push(
        `[requestfailed] ${request.method()} ${request.url()}: ${request.failure()?.errorText}`,
      );
    });
  }, 300_000);

  // A failed step prints where the browser and the server were, so a CI log alone can explain it
  // (the full logs and screenshots stay in test-artifacts).
  afterEach(async ({ task }) => {
    if (task.result?.state !== "fail") return;
    const tail = (text: string) => text.split("\n").slice(-60).join("\n");
    const shown = await page
      ?.evaluate(() => ({ url: location.href, text: (document.body.textContent ?? "").slice(-2000) }))
      .catch(() => null);
    console.error(
      [
        `e2e step failed: ${task.name}`,
        `page: ${shown?.url ?? "(unavailable)"}`,
        `page text (end): ${shown?.text ?? ""}`,
        `requests still open: ${[...inFlight].map((request) => `${request.method()} ${request.url()}`).join(", ")}`,
        `browser console (last 60 lines):\n${tail(consoleLines.join("\n"))}`,
        `server output (last 60 lines):\n${tail(server?.output ?? "")}`,
      ].join("\n"),
    );
    await screenshot(`failed-${task.name.slice(0, 40).replace(/[^a-z0-9]+/gi, "-")}`).catch(() => undefined);
  });

  afterAll(async () => {
    // The browser console and the server output, for diagnosing a failure after the fact.
    for (const request of inFlight) {
      consoleLines.push(
        `[unanswered] ${request.method()} ${request.url()} ${request.postData()?.slice(0, 300) ?? ""}`,
      );
    }
    await writeFile(join(artifacts, "browser-console.log"), consoleLines.join("\n"));
    await writeFile(join(artifacts, "server.log"), server?.output ?? "");
    if (page && !page.isClosed()) await screenshot("final").catch(() => undefined);
    await context?.close();
    await server?.stop();
    await Promise.all(
      [dataDir, profileDir].filter(Boolean).map((dir) => rm(dir, { recursive: true, force: true })),
    );
  }, 60_000);

  it("sends a message and streams the answer", { timeout: 120_000 }, async () => {
    await page.goto(server.url);
    await page.getByTestId("new-composer").fill("hello");
    await page.getByTestId("new-send").click();
    await expect.poll(() => page.url(), { timeout: STEP_MS }).toMatch(/#\/t\/.+/);
    // The demo model streams its help text word by word: the live text shows up before the commit.
    await page.getByTestId("live-text").first().waitFor();
    await expect
      .poll(() => assistantText().textContent(), { timeout: STEP_MS })
      .toContain("approve the launch");
    await expect.poll(() => page.getByTestId("live-text").count(), { timeout: STEP_MS }).toBe(0);
    await expect.poll(() => page.getByTestId("thread-list").textContent()).toContain("hello");
  });

  it("approves an action", { timeout: 120_000 }, async () => {
    await send("approve the launch");
    const card = lastCard("requestApproval");
    await card.getByRole("button", { name: "Approve" }).waitFor();
    expect(await card.getAttribute("data-state")).toBe("waiting");
    await expect.poll(() => page.getByTestId("run-status").getAttribute("data-status")).toBe("waiting");
    // The approval point's two-minute deadline counts down next to the form.
    await expect.poll(() => card.getByTestId("deadline-left").textContent()).toMatch(/^0[12]:[0-5]\d$/);
    await screenshot("approval-waiting");
    await card.getByLabel("Comment (optional)").fill("Ship it");
    await card.getByRole("button", { name: "Approve" }).click();
    await expect.poll(() => card.getAttribute("data-state"), { timeout: STEP_MS }).toBe("done");
    expect(await card.getByTestId("approval-result").textContent()).toBe("Approved: Ship it");
    await expect.poll(() => assistantText().textContent(), { timeout: STEP_MS }).toContain("Going ahead");
  });

  it("fills the report forms, survives a server restart mid-wait, and finishes", {
    timeout: 300_000,
  }, async () => {
    await send("write a report about churn");
    const card = lastCard("draftReport");
    const details = card.getByTestId("form-draftReport.collectDetails");
    await details.waitFor();

    // Validation messages come from the JSON Schema (rjsf with Ajv) before anything is sent. Each
    // shows under its input, and the schema's description of the field stays in view beside it.
    await details.getByRole("button", { name: "Continue" }).click();
    await details.getByText("This field is required.").first().waitFor();
    expect(await shownHints(details.getByLabel("Audience"))).toEqual([
      "This field is required.",
      "Who reads the report, e.g. the product team.",
    ]);
    await details.getByLabel("Audience").fill("Product team");
    await details.getByLabel("Number of sections").fill("12");
    await details.getByRole("button", { name: "Continue" }).click();
    await details.getByText("Must be at most 8.").waitFor();
    expect(await shownHints(details.getByLabel("Number of sections"))).toEqual([
      "Must be at most 8.",
      "From 1 to 8; the first one is a summary.",
    ]);
    await screenshot("report-validation");
    // At phone width the form fits: nothing scrolls sideways.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    const continueBox = await details.getByRole("button", { name: "Continue" }).boundingBox();
    expect((continueBox?.x ?? 0) + (continueBox?.width ?? 999)).toBeLessThanOrEqual(390);
    await screenshot("report-validation-phone");
    await page.setViewportSize({ width: 1280, height: 900 });
    await details.getByLabel("Number of sections").fill("3");
    await details.getByLabel("Tone").selectOption("friendly");
    await details.getByRole("button", { name: "Continue" }).click();

    const draft = card.getByTestId("form-draftReport.approveDraft");
    await draft.waitFor();
    await expect.poll(() => card.locator(".draft li").count()).toBe(3);
    await draft.getByRole("button", { name: "Approve draft" }).click();

    const reference = card.getByTestId("form-draftReport.attachReferenceFile");
    await reference.waitFor();
    await reference.getByLabel("Reference title").fill("Churn dashboard");
    await reference.getByLabel("Reference URL").fill("not a url");
    await reference.getByRole("button", { name: "Continue" }).click();
    await reference.getByText("Enter a full URL (https://...).").waitFor();

    // Restart the server while the tool waits: the page stays open and reconnects. An answer sent
    // while the server is down fails and says so.
    await server.stop();
    await page.getByTestId("reconnecting").waitFor();
    await reference.getByLabel("Reference URL").fill("https://example.com/churn.pdf");
    await reference.getByRole("button", { name: "Continue" }).click();
    await reference.getByTestId("form-error").waitFor();
    await screenshot("server-down");
    await server.start();
    await page.getByTestId("reconnecting").waitFor({ state: "detached", timeout: 120_000 });

    // The operator inbox (another tab) lists the same pending action, read from storage after the restart.
    const operator = await context.newPage();
    await operator.goto(`${server.url}/#/operator`);
    const inbox = operator.locator(
      '[data-testid="operator-action"][data-action="draftReport.attachReferenceFile"]',
    );
    await inbox.waitFor({ timeout: STEP_MS });
    // The waiting tool's data reads as labelled fields, not raw JSON.
    expect(await inbox.getByTestId("operator-preview").textContent()).toContain("Link the source document");
    expect(await inbox.getByTestId("operator-preview").textContent()).not.toContain("{");
    await operator.screenshot({ path: join(artifacts, `${String(++shot).padStart(2, "0")}-operator.png`) });
    await operator.close();

    // The form kept its state through the restart; send it again and finish. Once the action is
    // answered, the failed send's message is gone.
    expect(await reference.getByLabel("Reference URL").inputValue()).toBe("https://example.com/churn.pdf");
    await reference.getByRole("button", { name: "Continue" }).click();
    await expect.poll(() => card.getAttribute("data-state"), { timeout: STEP_MS }).toBe("done");
    expect(await card.getByTestId("form-error").count()).toBe(0);
    expect(await card.getByTestId("report-result").textContent()).toContain("for Product team (3 sections)");
    await expect.poll(() => assistantText().textContent(), { timeout: STEP_MS }).toContain("published");
    await screenshot("report-done");
  });

  it("shows durable progress reaching 100%", { timeout: 120_000 }, async () => {
    await send("deploy billing");
    const bar = lastCard("deployService").getByTestId("deploy-progress");
    await bar.waitFor();
    const seen = new Set<number>();
    await expect
      .poll(
        async () => {
          const value = Number(await bar.getAttribute("aria-valuenow"));
          seen.add(value);
          return value;
        },
        { timeout: STEP_MS, interval: 50 },
      )
      .toBe(100);
    expect([...seen].some((value) => value > 0 && value < 100)).toBe(true);
    await expect.poll(() => lastCard("deployService").getAttribute("data-state")).toBe("done");
    await expect
      .poll(() => assistantText().textContent(), { timeout: STEP_MS })
      .toContain("Deployed billing");
    await screenshot("deploy-done");
  });

  it("offers Retry for a retryable tool the server stopped in the middle of; its error clears once the thread moves on", {
    timeout: 300_000,
  }, async () => {
    const cards = page.getByTestId("tool-deployService");
    const before = await cards.count();
    await send("deploy billing");
    await expect.poll(() => cards.count(), { timeout: STEP_MS }).toBe(before + 1);
    const card = cards.nth(before);
    const bar = card.getByTestId("deploy-progress");
    await expect
      .poll(async () => Number(await bar.getAttribute("aria-valuenow")), { timeout: STEP_MS, interval: 50 })
      .toBeGreaterThan(0);

    // Stopped mid-deploy: the call ends interrupted, and deployService is marked safe to run again.
    await server.stop();
    await page.getByTestId("reconnecting").waitFor();
    await server.start();
    await page.getByTestId("reconnecting").waitFor({ state: "detached", timeout: 120_000 });
    await expect.poll(() => card.getAttribute("data-state"), { timeout: STEP_MS }).toBe("error");
    expect(await card.getByTestId("tool-badge").textContent()).toBe("interrupted");
    expect(Number(await bar.getAttribute("aria-valuenow"))).toBeLessThan(100);
    await expect
      .poll(() => assistantText().textContent(), { timeout: STEP_MS })
      .toContain("deployService did not finish");
    const retry = card.getByRole("button", { name: "Retry" });
    await expect.poll(() => retry.isEnabled(), { timeout: STEP_MS }).toBe(true);
    await screenshot("interrupted");

    // A retry while the server is down fails and says so...
    await server.stop();
    await page.getByTestId("reconnecting").waitFor();
    await retry.click();
    await card.getByTestId("retry-error").waitFor();
    await screenshot("retry-failed");
    await server.start();
    await page.getByTestId("reconnecting").waitFor({ state: "detached", timeout: 120_000 });

    // ...until the thread moves on: another tab retries, which sends the user's turn again.
    const other = await context.newPage();
    await other.goto(page.url());
    await other.getByTestId("tool-deployService").nth(before).getByRole("button", { name: "Retry" }).click();
    await expect.poll(() => cards.count(), { timeout: STEP_MS }).toBe(before + 2);
    await other.close();
    expect(await page.getByTestId("message-user").last().textContent()).toBe("deploy billing");
    await expect
      .poll(() => cards.nth(before + 1).getAttribute("data-state"), { timeout: STEP_MS })
      .toBe("done");
    await expect
      .poll(() => assistantText().textContent(), { timeout: STEP_MS })
      .toContain("Deployed billing");
    expect(await card.getByTestId("retry-error").count()).toBe(0);
    expect(await retry.count()).toBe(0);
    await screenshot("retried");
  });

  it("answers the client tools in the browser", { timeout: 120_000 }, async () => {
    // Nothing selected: the automatic answer gives up and the form asks the user.
    await send("what did I select?");
    const card = lastCard("getSelectedText");
    const form = card.getByTestId("form-getSelectedText.output");
    await form.waitFor();
    await form.getByRole("button", { name: "Send text" }).click();
    await form.getByText("This field is required.").waitFor();
    await form.getByLabel("Selected text").fill("typed by hand");
    await form.getByRole("button", { name: "Send text" }).click();
    await expect.poll(() => card.getAttribute("data-state"), { timeout: STEP_MS }).toBe("done");
    expect(await card.getByTestId("selection-result").textContent()).toBe("typed by hand");
    await screenshot("client-tool-form");

    // With a selection in the conversation, the browser answers on its own.
    await page.evaluate(() => {
      const target = document.querySelector('[data-testid="approval-result"]');
      if (!target) throw new Error("no approval result on the page");
      const range = document.createRange();
      range.selectNodeContents(target);
      document.getSelection()?.removeAllRanges();
      document.getSelection()?.addRange(range);
    });
    await page.waitForTimeout(100);
    await send("what did I select now?");
    await expect.poll(() => page.getByTestId("tool-getSelectedText").count(), { timeout: STEP_MS }).toBe(2);
    await expect
      .poll(() => lastCard("getSelectedText").getAttribute("data-state"), { timeout: STEP_MS })
      .toBe("done");
    expect(await lastCard("getSelectedText").getByTestId("selection-result").textContent()).toBe(
      "Approved: Ship it",
    );

    // A frontend-defined tool: only this page knows it, and it runs here.
    await send("what is my browser time zone?");
    await lastCard("getBrowserInfo").getByTestId("browser-info").waitFor();
    await expect.poll(() => assistantText().textContent(), { timeout: STEP_MS }).toContain("time zone");
  });

  it("downloads the CSV a tool saved", { timeout: 120_000 }, async () => {
    await send("export orders as csv");
    const link = lastCard("exportCsv").getByTestId("csv-download");
    await link.waitFor();
    const [download] = await Promise.all([page.waitForEvent("download"), link.click()]);
    expect(download.suggestedFilename()).toBe("orders.csv");
    const saved = join(artifacts, "orders.csv");
    await download.saveAs(saved);
    const lines = (await readFile(saved, "utf8")).trim().split("\n");
    expect(lines[0]).toBe("order_id,customer,total_eur,status");
    expect(lines).toHaveLength(13);
    await screenshot("csv");
  });

  it("runs shell commands in the thread's sandbox and a code-mode program", {
    timeout: 120_000,
  }, async () => {
    await send("run echo hello sandbox > note.txt && cat note.txt");
    await expect
      .poll(() => lastCard("runShell").getAttribute("data-state"), { timeout: STEP_MS })
      .toBe("done");
    expect(await lastCard("runShell").getByTestId("shell-output").textContent()).toContain("hello sandbox");

    // The program calls orderTotal five times and runShell once, in one tool call.
    await send("sum the totals of 5 orders with code");
    await expect
      .poll(() => lastCard("runCode").getAttribute("data-state"), { timeout: STEP_MS })
      .toBe("done");
    expect(await lastCard("runCode").getByTestId("code-result").textContent()).toBe(
      'Result: {"orders":5,"sumEur":470}',
    );
    // Files persist per thread: the program's runShell wrote totals.txt next to note.txt.
    await send("run ls");
    await expect.poll(() => page.getByTestId("tool-runShell").count(), { timeout: STEP_MS }).toBe(2);
    await expect
      .poll(() => lastCard("runShell").getByTestId("shell-output").textContent(), { timeout: STEP_MS })
      .toMatch(/note\.txt[\s\S]*totals\.txt/);
    await screenshot("sandbox-and-code");
  });

  it("keeps the admin tool disabled for a normal user", { timeout: 120_000 }, async () => {
    await send("admin stats");
    await expect
      .poll(() => assistantText().textContent(), { timeout: STEP_MS })
      .toContain("adminStats is disabled for you");
    expect(await page.getByTestId("tool-adminStats").count()).toBe(0);
  });

  it("runs the same agent behind the stock useChat: stream, progress from data parts, reload mid-stream, approval across a reload and a server restart, a client tool", {
    timeout: 240_000,
  }, async () => {
    const valid = () => page.getByTestId("chat-valid").textContent();
    const chatSend = async (text: string) => {
      const before = await page.getByTestId("chat-user").count();
      await page.getByTestId("chat-composer").fill(text);
      await page.getByTestId("chat-send").click();
      await expect.poll(() => page.getByTestId("chat-user").count(), { timeout: STEP_MS }).toBe(before + 1);
    };
    await page.goto(`${server.url}/#/chat`);
    await page.getByTestId("usechat").waitFor();
    await expect.poll(() => page.url(), { timeout: STEP_MS }).toMatch(/#\/chat\/.+/);

    // A long tool: its durable progress arrives as data-progress parts; a reload mid-stream resumes it.
    await chatSend("deploy billing");
    await page.getByTestId("chat-progress").first().waitFor();
    await screenshot("usechat-progress");
    await page.reload();
    await page.getByTestId("usechat").waitFor();
    await expect
      .poll(() => page.getByTestId("chat-progress").last().getAttribute("data-pct"), { timeout: STEP_MS })
      .toBe("1");
    await expect
      .poll(() => page.getByTestId("chat-tool-deployService").last().getAttribute("data-state"), {
        timeout: STEP_MS,
      })
      .toBe("output-available");
    expect(await valid()).toBe("valid");

    // An approval point in the SDK's approval-requested state, still there after a reload and a restart.
    await chatSend("approve the launch");
    await page.getByTestId("chat-approval").waitFor();
    // The SDK's approval part has no deadline; the page reads it from PAI and counts down.
    await expect
      .poll(() => page.getByTestId("chat-approval").getByTestId("deadline-left").textContent())
      .toMatch(/^0[12]:[0-5]\d$/);
    await screenshot("usechat-approval");
    await page.reload();
    await page.getByTestId("chat-approval").waitFor();
    await server.stop();
    await server.start();
    await page.reload();
    await page.getByTestId("chat-approval").getByRole("button", { name: "Approve" }).click();
    await expect
      .poll(() => page.getByTestId("chat-approval-result").last().textContent(), { timeout: STEP_MS })
      .toBe("Approved");
    await expect
      .poll(() => page.getByTestId("chat-status").textContent(), { timeout: STEP_MS })
      .toBe("ready");
    expect(await page.getByTestId("chat-error").count()).toBe(0);

    // Suspend points that are not approvals: data-pai-action parts, answered through the transport.
    await chatSend("write a report about churn");
    const answer = async (name: string, payload: unknown) => {
      const form = page.getByTestId(`chat-action-draftReport.${name}`);
      await form.waitFor();
      await form.locator("textarea").fill(JSON.stringify(payload));
      await form.getByRole("button", { name: "Submit" }).click();
      await expect.poll(() => form.count(), { timeout: STEP_MS }).toBe(0);
    };
    await answer("collectDetails", { audience: "Board", sections: 3, tone: "formal" });
    await answer("approveDraft", { approved: true });
    await screenshot("usechat-report-form");
    await answer("attachReferenceFile", { title: "Spec", url: "https://example.com/spec.pdf" });
    await expect
      .poll(() => page.getByTestId("chat-tool-draftReport").last().getAttribute("data-state"), {
        timeout: STEP_MS,
      })
      .toBe("output-available");
    expect(await valid()).toBe("valid");

    // A client tool answered with the SDK's addToolOutput.
    await chatSend("what did I select?");
    await page.getByTestId("chat-client-tool").getByRole("button", { name: "Send selection" }).click();
    await expect
      .poll(() => page.getByTestId("chat-tool-getSelectedText").last().getAttribute("data-state"), {
        timeout: STEP_MS,
      })
      .toBe("output-available");
    await expect
      .poll(() => page.getByTestId("chat-status").textContent(), { timeout: STEP_MS })
      .toBe("ready");
    expect(await valid()).toBe("valid");
    await screenshot("usechat-done");
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot("usechat-phone");
    await page.setViewportSize({ width: 1280, height: 900 });
  });
});
