import { apiSettings } from "@outbox/api";
import { consoleSettings } from "@outbox/console";
import { consumerSettings } from "@outbox/consumer";
import { relaySettings } from "@outbox/relay";
import { commonSettings, type SettingsSpec } from "@outbox/shared";

/** Every docs page that carries a generated config table, and the settings it documents. */
export const configPages: readonly { readonly page: string; readonly settings: SettingsSpec }[] = [
  { page: "docs/configuration.md", settings: commonSettings },
  { page: "docs/relay.md", settings: relaySettings },
  { page: "docs/consumer.md", settings: consumerSettings },
  { page: "docs/api.md", settings: apiSettings },
  { page: "docs/console.md", settings: consoleSettings },
];
