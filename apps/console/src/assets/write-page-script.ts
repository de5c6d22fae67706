// `pnpm build`'s step after tsc: the page's script bundled once, so a built console never runs esbuild.
import { writePageScript } from "./page-script.js";

await writePageScript();
