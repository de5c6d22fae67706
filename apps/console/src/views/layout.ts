import { type Html, html } from "../html.js";

/** The console's views, in the order of its navigation. */
export const VIEWS = [
  { path: "/", title: "Flow" },
  { path: "/blocked-keys", title: "Blocked keys" },
  { path: "/dead-rows", title: "Dead rows" },
  { path: "/dead-letters", title: "Dead letters" },
  { path: "/replays", title: "Replays" },
] as const;

export type ViewPath = (typeof VIEWS)[number]["path"];

export interface PageFrame {
  readonly title: string;
  /** The view the page belongs to, marked in the navigation (`aria-current`). */
  readonly view: ViewPath | null;
  readonly readOnly: boolean;
  /** Seconds between live refreshes; 0: the page does not refresh itself (a preview, a report). */
  readonly refreshSeconds: number;
}

/**
 * Every page: its own style and script only (the Content-Security-Policy allows nothing else), a
 * skip link, the navigation, the live-refresh status the script updates, and the page's content.
 */
export function layout(frame: PageFrame, content: Html): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${frame.title} · outbox console</title>
<link rel="stylesheet" href="/assets/uPlot.min.css">
<link rel="stylesheet" href="/assets/console.css">
<link rel="icon" href="/assets/favicon.svg" type="image/svg+xml">
<script type="module" src="/assets/console.js"></script>
</head>
<body data-refresh-seconds="${frame.refreshSeconds}">
<a class="skip" href="#content">Skip to content</a>
<header>
<p class="brand">outbox console</p>
<nav aria-label="Views"><ul>
${VIEWS.map(
  (view) =>
    html`<li><a href="${view.path}"${view.path === frame.view ? html` aria-current="page"` : ""}>${view.title}</a></li>`,
)}
</ul></nav>
${frame.readOnly ? html`<p class="mode" role="note">Read-only: actions are off (CONSOLE_READ_ONLY).</p>` : ""}
<p class="live-status" id="live-status" role="status" aria-live="polite">${
    frame.refreshSeconds > 0 ? `Refreshes every ${frame.refreshSeconds} s.` : ""
  }</p>
</header>
<main id="content" tabindex="-1">
<h1>${frame.title}</h1>
${content}
</main>
</body>
</html>
`;
}
