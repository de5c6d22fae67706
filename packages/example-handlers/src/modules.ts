import { fileURLToPath } from "node:url";

// The handler modules as paths for CONSUMER_HANDLERS_MODULE: the consumer daemon loads its handlers by
// path, as it loads a user's. Beside this file whatever it was built to (.ts from source, .js from dist).
const extension = import.meta.url.slice(import.meta.url.lastIndexOf("."));
const beside = (name: string): string => fileURLToPath(new URL(`./${name}${extension}`, import.meta.url));

/** The demo's handlers: one row in `example_effects` per event, one row of the photo feed per photo. */
export const EXAMPLE_HANDLERS_MODULE = beside("example-handlers");

/** The example effect after DRILL_HANDLER_MS of work, so a stop lands inside the handler. */
export const SLOW_EXAMPLE_HANDLERS_MODULE = beside("slow-example-handlers");

/** The example effect after a call to DRILL_DOWNSTREAM_URL: fails while that downstream does. */
export const DOWNSTREAM_HANDLERS_MODULE = beside("downstream-handlers");
