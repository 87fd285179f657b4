// Loads a coder-eval report in headless Chromium (Debian's `chromium`, driven by
// playwright-core) and prints what tests/all/browser.rs checks, as one JSON line:
// console errors, the load time (ms), whether the first trajectory opens on a click and
// how many entries it shows, the tool bars of each timeline SVG in page order, whether
// any injected script ran, and what each matrix filter leaves visible.
//
// Usage: node report.mjs URL   (CHROMIUM overrides /usr/bin/chromium)
import { chromium } from "playwright-core";

const url = process.argv[2];
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox"],
});
try {
  const page = await browser.newPage();
  const errors = [];
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(String(e)));
  const started = Date.now();
  await page.goto(url, { waitUntil: "load" });
  const loadMs = Date.now() - started;
  const first = page.locator("details.trajectory").first();
  const before = await first.evaluate((d) => d.open);
  await first.locator("summary").first().click();
  const opened = await first.evaluate((d) => d.open);
  const entries = await first.locator(":scope > ol > li.entry").count();
  const entriesVisible = await first.locator(":scope > ol > li.entry").first().isVisible();
  const toolBars = await page.$$eval("svg.timeline", (svgs) =>
    svgs.map((s) => s.querySelectorAll("rect.tool").length),
  );
  const injectedRan = await page.evaluate(() => window.__injected === true);
  // The matrix filters: the tasks left visible by each, one at a time.
  const visibleTasks = () =>
    page.$$eval("#matrix tr", (rows) =>
      rows.slice(1).filter((r) => r.style.display !== "none").map((r) => r.cells[0].textContent),
    );
  const filters = {};
  for (const [id, value] of [["f-status", "FAILURE"], ["f-status", "SUCCESS"], ["f-tag", "scenario"]]) {
    await page.selectOption(`#${id}`, value);
    filters[`${id}=${value}`] = await visibleTasks();
    await page.selectOption(`#${id}`, "");
  }
  const columns = await page.$$eval("#f-column option", (o) => o.map((x) => x.value).filter(Boolean));
  await page.selectOption("#f-column", columns[0]);
  filters.visibleHeaders = await page.$$eval("#matrix tr:first-child th", (ths) =>
    ths.filter((t) => t.style.display !== "none").map((t) => t.textContent),
  );
  await page.selectOption("#f-column", "");
  const text = await page.textContent("body");
  console.log(
    JSON.stringify({
      errors,
      loadMs,
      before,
      opened,
      entries,
      entriesVisible,
      toolBars,
      injectedRan,
      filters,
      bodyText: text,
    }),
  );
} finally {
  await browser.close();
}
