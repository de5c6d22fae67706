import { execFileSync } from "node:child_process";
import puppeteer, { type Browser, type Page } from "puppeteer-core";

/** Debian's chromium package (.ci/run installs it): the real browser, driven over its DevTools protocol. */
function chromiumPath(): string {
  try {
    return execFileSync("sh", ["-c", "command -v chromium"], { encoding: "utf8" }).trim();
  } catch {
    throw new Error("no chromium on PATH: apt-get install -y chromium (see the README's set-up)");
  }
}

/**
 * A headless Chromium with one page, 1280×900, every wait bounded by `boundMs`. What goes wrong in
 * the page (an uncaught error, a console error, a failed request) is pushed to `pageErrors`, for
 * the test to assert empty. Close the browser in afterAll.
 */
export async function openHeadlessPage(
  boundMs: number,
  pageErrors: string[],
): Promise<{ browser: Browser; page: Page }> {
  const browser = await puppeteer.launch({
    executablePath: chromiumPath(),
    // Root in CI: Chromium's sandbox needs a user namespace it is not given there.
    args: ["--no-sandbox", "--disable-dev-shm-usage"],
    timeout: boundMs,
  });
  const page = await browser.newPage();
  page.setDefaultTimeout(boundMs);
  page.on("pageerror", (error) => pageErrors.push(String(error)));
  page.on("console", (message) => {
    if (message.type() === "error") pageErrors.push(message.text());
  });
  page.on("requestfailed", (request) => pageErrors.push(`request failed: ${request.url()}`));
  await page.setViewport({ width: 1280, height: 900 });
  return { browser, page };
}
