import { existsSync } from "node:fs";
import { type BrowserContext, chromium, type Locator } from "playwright-core";

// Debian's headless Chromium, driven by playwright-core, for the browser test (e2e.test.ts).

export const CHROMIUM = "/usr/bin/chromium";
export const hasChromium = existsSync(CHROMIUM);

export function launchChromium(profileDir: string): Promise<BrowserContext> {
  return chromium.launchPersistentContext(profileDir, {
    executablePath: CHROMIUM,
    headless: true,
    acceptDownloads: true,
    viewport: { width: 1280, height: 900 },
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/** The visible texts an input's aria-describedby points at (its error, its description), in order. */
export function shownHints(input: Locator): Promise<string[]> {
  return input.evaluate((element) =>
    (element.getAttribute("aria-describedby") ?? "")
      .split(" ")
      .map((id) => document.getElementById(id))
      .filter((hint): hint is HTMLElement => hint?.checkVisibility() ?? false)
      .map((hint) => hint.textContent ?? ""),
  );
}
